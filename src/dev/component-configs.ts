/**
 * Configuration files of the control plane's fake and real components (KWOK, kube-scheduler),
 * as control-plane.ts starts them. Every figure here is a test-harness setting: it sizes the
 * fake cluster to the machine it runs on, and none of it is azflex's behaviour.
 */

/** Workers of each KWOK loop (upstream default 4): pods bound in a burst of 1,000 start in seconds. */
const KWOK_PARALLELISM = 16;

/**
 * KWOK's options and its Node stages. A Node is made Ready once; after that its status is
 * re-reported every 5 to 6 minutes, as a kubelet with a Lease does (nodeStatusReportFrequency
 * 5 min), since the Lease is its heartbeat. KWOK's built-in choice re-patches every Node's
 * status every 20-45 s when Leases are on, which at 1,000 Nodes is most of the API server's
 * write load. Pods keep KWOK's built-in stages (Running at once, deletion confirmed).
 */
export function kwokConfigYaml(): string {
  const conditions = [
    '      {{ $since := .metadata.creationTimestamp }}',
    '      conditions:',
    '      {{ range NodeConditions }}',
    `      - {type: {{ .type | Quote }}, status: {{ .status | Quote }}, reason: {{ .reason | Quote }}, message: {{ .message | Quote }}, lastHeartbeatTime: {{ Now | Quote }}, lastTransitionTime: {{ $since | Quote }}}`,
    '      {{ end }}',
  ];
  const stage = (name: string, readyIs: 'In' | 'NotIn', body: string[], delay?: [number, number]): string[] => [
    '---',
    'apiVersion: kwok.x-k8s.io/v1alpha1',
    'kind: Stage',
    `metadata: {name: ${name}}`,
    'spec:',
    '  resourceRef: {apiGroup: v1, kind: Node}',
    '  selector:',
    '    matchExpressions:',
    `    - {key: '.status.conditions.[] | select( .type == "Ready" ) | .status', operator: ${readyIs}, values: ['True']}`,
    ...(delay ? [`  delay: {durationMilliseconds: ${delay[0]}, jitterDurationMilliseconds: ${delay[1]}}`] : []),
    '  next:',
    '    statusTemplate: |',
    ...body,
  ];
  return [
    'apiVersion: config.kwok.x-k8s.io/v1alpha1',
    'kind: KwokConfiguration',
    'options:',
    `  nodePlayStageParallelism: ${KWOK_PARALLELISM}`,
    `  podPlayStageParallelism: ${KWOK_PARALLELISM}`,
    `  nodeLeaseParallelism: ${KWOK_PARALLELISM}`,
    // The Node's capacity, allocatable and nodeInfo are the registration's (a kubelet's create).
    ...stage('azflex-node-ready', 'NotIn', [
      ...conditions,
      '      addresses:',
      '      - {type: InternalIP, address: {{ NodeIP | Quote }}}',
      '      - {type: Hostname, address: {{ .metadata.name | Quote }}}',
      '      phase: Running',
    ]),
    ...stage('azflex-node-status-report', 'In', conditions, [300_000, 360_000]),
    '',
  ].join('\n');
}

export interface SchedulerConfigOptions {
  kubeconfigPath: string;
  /** Client QPS (burst twice it); the scheduler's default is 50. */
  qps?: number;
  /** Nodes scored per pod once enough feasible ones are found; the default adapts (about 42% at 1,000 Nodes). */
  percentageOfNodesToScore?: number;
  /**
   * Leave out DefaultPreemption. For a workload of one priority it never finds a victim, yet its
   * dry run re-filters every Node for each pod that does not fit: half the cost of each of a
   * burst's 1,000 failed attempts.
   */
  noPreemption?: boolean;
}

export function schedulerConfigYaml(o: SchedulerConfigOptions): string {
  return [
    'apiVersion: kubescheduler.config.k8s.io/v1',
    'kind: KubeSchedulerConfiguration',
    'leaderElection: {leaderElect: false}',
    `clientConnection: {kubeconfig: ${JSON.stringify(o.kubeconfigPath)}${o.qps ? `, qps: ${o.qps}, burst: ${o.qps * 2}` : ''}}`,
    ...(o.percentageOfNodesToScore ? [`percentageOfNodesToScore: ${o.percentageOfNodesToScore}`] : []),
    ...(o.noPreemption ? ['profiles:', '- schedulerName: default-scheduler', '  plugins: {postFilter: {disabled: [{name: DefaultPreemption}]}}'] : []),
    '',
  ].join('\n');
}
