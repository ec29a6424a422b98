{{- define "azflex.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "azflex.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "azflex.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "azflex.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.additionalLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
metadata.annotations of an object (at metadata's indentation): additionalAnnotations merged
under the object's own (a dict passed as "own"; the object's win). Nothing when both are empty.
Usage:   {{- include "azflex.annotations" (dict "root" . "own" $dict) }}
*/}}
{{- define "azflex.annotations" -}}
{{- $all := merge (deepCopy (default (dict) .own)) (default (dict) .root.Values.additionalAnnotations) -}}
{{- with $all }}
  annotations:
    {{- toYaml . | nindent 4 }}
{{- end }}
{{- end -}}

{{/* Workload identity's client ID: azure.clientID, or the one set as a ServiceAccount annotation (the upstream charts' way). */}}
{{- define "azflex.workloadIdentityClientID" -}}
{{- default (get (default (dict) .Values.serviceAccount.annotations) "azure.workload.identity/client-id") .Values.azure.clientID -}}
{{- end -}}

{{- define "azflex.selectorLabels" -}}
app.kubernetes.io/name: {{ include "azflex.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "azflex.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "azflex.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create=false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "azflex.workloadIdentity" -}}
{{- eq .Values.azure.credentials "workloadIdentity" -}}
{{- end -}}

{{/* repository@digest when a digest is given (immutable), else repository:tag. */}}
{{- define "azflex.image" -}}
{{- $img := .Values.controller.image -}}
{{- if $img.digest -}}
{{- printf "%s@%s" $img.repository $img.digest -}}
{{- else -}}
{{- printf "%s:%s" $img.repository (default .Chart.AppVersion $img.tag) -}}
{{- end -}}
{{- end -}}

{{/*
AZURE_TOKEN_CREDENTIALS for azure.credentials: which @azure/identity credential DefaultAzureCredential uses.
*/}}
{{- define "azflex.tokenCredential" -}}
{{- $m := dict "workloadIdentity" "WorkloadIdentityCredential" "managedIdentity" "ManagedIdentityCredential" "servicePrincipal" "EnvironmentCredential" -}}
{{- required (printf "azure.credentials must be workloadIdentity, managedIdentity or servicePrincipal, got %q" .Values.azure.credentials) (get $m .Values.azure.credentials) -}}
{{- end }}
