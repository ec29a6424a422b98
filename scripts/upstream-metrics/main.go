// Prints, as JSON, every Prometheus metric upstream Karpenter registers: name, help, type,
// label names and histogram buckets, read from the collectors its own packages register at
// init (the node gauges are created by their controller's constructor). Built and run by
// scripts/upstream-karpenter.mjs (ensureUpstreamMetrics) against the release it names; the
// go.mod is written there, so this directory is not a Go module of its own.

package main

import (
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strings"

	"azflexdump/hook"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	_ "sigs.k8s.io/karpenter/pkg/cloudprovider/metrics"
	_ "sigs.k8s.io/karpenter/pkg/controllers/disruption"
	_ "sigs.k8s.io/karpenter/pkg/controllers/metrics/nodepool"
	_ "sigs.k8s.io/karpenter/pkg/controllers/metrics/pod"
	"sigs.k8s.io/karpenter/pkg/controllers/metrics/node"
	_ "sigs.k8s.io/karpenter/pkg/controllers/node/termination"
	_ "sigs.k8s.io/karpenter/pkg/controllers/node/termination/terminator"
	_ "sigs.k8s.io/karpenter/pkg/controllers/nodeclaim/lifecycle"
	_ "sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	_ "sigs.k8s.io/karpenter/pkg/controllers/state"
	_ "sigs.k8s.io/karpenter/pkg/metrics"
)

type family struct {
	Name    string    `json:"name"`
	Help    string    `json:"help"`
	Type    string    `json:"type"`
	Labels  []string  `json:"labels"`
	Buckets []float64 `json:"buckets,omitempty"`
}

var descRe = regexp.MustCompile(`fqName: "([^"]*)", help: "((?:[^"\\]|\\.)*)", constLabels: \{[^}]*\}, variableLabels: \{([^}]*)\}`)

func main() {
	node.NewController(nil) // the node gauges are created by their controller's constructor
	out := []family{}
	for _, c := range hook.Collectors {
		ch := make(chan *prometheus.Desc, 16)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			m := descRe.FindStringSubmatch(d.String())
			if m == nil {
				continue
			}
			f := family{Name: m[1], Help: m[2], Labels: []string{}}
			if m[3] != "" {
				f.Labels = strings.Split(m[3], ",")
			}
			values := map[string]string{}
			for _, l := range f.Labels {
				values[l] = "x"
			}
			var metric prometheus.Metric
			switch v := c.(type) {
			case *prometheus.CounterVec:
				f.Type = "counter"
			case *prometheus.GaugeVec:
				f.Type = "gauge"
			case *prometheus.HistogramVec:
				f.Type = "histogram"
				metric = v.With(values).(prometheus.Metric)
			case *prometheus.SummaryVec:
				f.Type = "summary"
			default:
				f.Type = "other"
			}
			if metric != nil {
				var pb dto.Metric
				if err := metric.Write(&pb); err == nil && pb.Histogram != nil {
					for _, b := range pb.Histogram.Bucket {
						f.Buckets = append(f.Buckets, b.GetUpperBound())
					}
				}
			}
			sort.Strings(f.Labels)
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	_ = enc.Encode(out)
}
