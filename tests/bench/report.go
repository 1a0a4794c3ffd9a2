package main

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// percentile returns the nearest-rank p-quantile (0 < p <= 1) of samples.
func percentile(samples []time.Duration, p float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(samples))
	return s[max(int(math.Ceil(p*float64(len(s))))-1, 0)]
}

func us(d time.Duration) float64 { return math.Round(float64(d)/float64(time.Microsecond)*10) / 10 }

// report collects the table, a Markdown table of preformatted rows, and the
// final JSON object, whose keys keep the order in which they were added.
type report struct {
	rows []string
	keys []string
	vals map[string]any
}

func (r *report) set(key string, v any) {
	if r.vals == nil {
		r.vals = map[string]any{}
	}
	if _, ok := r.vals[key]; !ok {
		r.keys = append(r.keys, key)
	}
	r.vals[key] = v
}

func (r *report) row(cells ...any) {
	r.rows = append(r.rows, strings.TrimSpace(fmt.Sprintln(append([]any{"|"}, cells...)...))+" |")
}

func (r *report) section(title string) { r.row("**"+title+"**", "|", "|", "|", "|", "|") }

// latency adds a latency figure: prefix_p50_us and prefix_p99_us, and when
// floor > 0 prefix_floor_us and prefix_ratio (the ratio of the medians).
func (r *report) latency(label, prefix string, samples []time.Duration, floorTag string, floor time.Duration) time.Duration {
	p50, p99 := percentile(samples, 0.5), percentile(samples, 0.99)
	r.set(prefix+"_p50_us", us(p50))
	r.set(prefix+"_p99_us", us(p99))
	floorCell, ratioCell := "", ""
	if floor > 0 {
		ratio := math.Round(float64(p50)/float64(floor)*100) / 100
		r.set(prefix+"_floor_us", us(floor))
		r.set(prefix+"_ratio", ratio)
		floorCell, ratioCell = fmt.Sprintf("%.1f %s", us(floor), floorTag), fmt.Sprintf("%.2f", ratio)
	}
	r.row(label, "|", len(samples), "|", us(p50), "|", us(p99), "|", floorCell, "|", ratioCell)
	return p50
}

// value adds a figure that is not a latency.
func (r *report) value(label, key string, v any, shown string) {
	r.set(key, v)
	r.row(label, "|", "|", shown, "|", "|", "|")
}

// missing records figures that could not be measured (JSON null).
func (r *report) missing(label, why string, keys ...string) {
	for _, k := range keys {
		r.set(k, nil)
	}
	r.value(label, keys[0], nil, "n/a: "+why)
}

func (r *report) print() {
	fmt.Println("| figure | n | p50 µs | p99 µs | floor p50 µs | ratio |\n|---|--:|--:|--:|--:|--:|")
	fmt.Println(strings.Join(r.rows, "\n"))
	obj := []byte{'{'}
	for i, k := range r.keys {
		kj, _ := json.Marshal(k)
		vj, _ := json.Marshal(r.vals[k])
		if i > 0 {
			obj = append(obj, ',')
		}
		obj = append(append(append(obj, kj...), ':'), vj...)
	}
	fmt.Println(string(append(obj, '}')))
}
