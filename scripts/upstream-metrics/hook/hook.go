// Package hook swaps controller-runtime's metrics registry for one that records every
// collector registered. Its import path sorts before every dependency that registers
// metrics, so Go's package initialisation order runs it first after crmetrics itself.
package hook

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

type recorder struct {
	crmetrics.RegistererGatherer
}

var Collectors []prometheus.Collector

func (r recorder) Register(c prometheus.Collector) error {
	Collectors = append(Collectors, c)
	return r.RegistererGatherer.Register(c)
}

func (r recorder) MustRegister(cs ...prometheus.Collector) {
	Collectors = append(Collectors, cs...)
	r.RegistererGatherer.MustRegister(cs...)
}

func init() { crmetrics.Registry = recorder{crmetrics.Registry} }
