package main

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/kinject/kubectl-inject/pkg/inject/naming"
)

// admissionSection is section 6 and the goals of the admission policy.
func (r *report) admissionSection() string {
	a := r.admission
	if a == nil || len(a.Runs) == 0 {
		return ""
	}
	b, p := printer()
	p("## 6. Admission policy: Pods created with and without it\n\n")
	p("A throw-away etcd + kube-apiserver v1.37 (test/cluster, ServiceAccount admission plugin off\n")
	p("as in test/admission; every other default plugin on). %s Pods (a ReplicaSet's Pod: three\n", commas(a.Pods))
	p("labels, one nginx container with a port; %s of JSON) are created with client-go, %d at a\n", kb(a.PodBytes), a.Workers)
	p("time, in a fresh namespace: **without** any admission policy; **with** the policy of\n")
	p("`kubectl inject policy` for the embedded template (a MutatingAdmissionPolicy, a\n")
	p("ValidatingAdmissionPolicy and their bindings, %s of YAML, server-side applied with field\n", kb(a.PolicyBytes))
	p("manager `kubectl-inject` and waited for until dry-run creates show both policies run);\n")
	p("and, as the control, **pre-injected**: without any policy, the Pod as the core injects it\n")
	p("(`kubectl inject --local`, the object the policy stores: %s of JSON), which separates the\n", kb(a.InjectedPodBytes))
	p("cost of storing a larger Pod from the cost of the policy; and, as the floor of any\n")
	p("mutating policy, **constant**: a MutatingAdmissionPolicy (`hack/bench/admission_floor.go`)\n")
	p("whose one JSON patch adds exactly what the policy adds to this Pod, as CEL literals, with\n")
	p("no match condition, no variable, no decision and no validating policy: what the API server\n")
	p("spends on it, every admission policy that injects this sidecar pays. %d rounds, the order\n", a.Rounds)
	p("alternating (without, with, constant, pre-injected; pre-injected, constant, with, without;\n")
	p("...) so that drift hits every side alike, after %d untimed warm-up Pods; the Pods are deleted after each run. Time is\n", a.Warmup)
	p("the wall time of the creations; Pods/s is requests/s (one POST each, checked against the\n")
	p("server's `apiserver_request_total`).\n\n")
	t := &table{head: []string{"round", "without", "Pods/s", "pre-injected", "Pods/s", "constant", "Pods/s", "with policy", "Pods/s",
		"with / without", "constant / without", "with / constant", "POST pods", "injected (constant, with)"}}
	rounds := byRound(a.Runs, func(x admissionRun) (int, string) { return x.Round, x.Side })
	rate := func(d time.Duration) string { return fmt.Sprintf("%.0f", float64(a.Pods)/d.Seconds()) }
	injected, injectedFloor := 0, 0
	for i := 0; i < a.Rounds; i++ {
		off, ctl, fl, on := rounds[i][sideOff], rounds[i][sideCtl], rounds[i][sideFloor], rounds[i][sideOn]
		injected += on.Injected
		injectedFloor += fl.Injected
		t.add(fmt.Sprint(i+1), secs(off.Wall), rate(off.Wall), secs(ctl.Wall), rate(ctl.Wall), secs(fl.Wall), rate(fl.Wall), secs(on.Wall), rate(on.Wall),
			ratio(on.Wall.Seconds(), off.Wall.Seconds()), ratio(fl.Wall.Seconds(), off.Wall.Seconds()), ratio(on.Wall.Seconds(), fl.Wall.Seconds()),
			fmt.Sprintf("%d, %d, %d, %d", off.Posts, ctl.Posts, fl.Posts, on.Posts), commas(fl.Injected)+", "+commas(on.Injected))
	}
	off, ctl, fl, on := medianOf(a.walls(sideOff)), medianOf(a.walls(sideCtl)), medianOf(a.walls(sideFloor)), medianOf(a.walls(sideOn))
	t.add("**median**", secs(off), rate(off), secs(ctl), rate(ctl), secs(fl), rate(fl), secs(on), rate(on),
		"**"+ratio(on.Seconds(), off.Seconds())+"**", ratio(fl.Seconds(), off.Seconds()), ratio(on.Seconds(), fl.Seconds()), "", "")
	p("%s\n", t)
	rt := on.Seconds() / off.Seconds()
	p("Every Pod created with the policy or the constant one was stored with the envoy container\n")
	p("and the `%s` annotation (%s and %s of %s); none created without. The policy took %s (median\n", naming.StatusAnnotation, commas(injected), commas(injectedFloor), commas(a.Pods*a.Rounds), secs(medianOf(a.Activation)))
	p("of %d installs) from the first apply until both policies ran on dry-run creates. The\n", len(a.Activation))
	p("controls: the larger Pod alone takes %s the time without (pre-injected / without); the\n", ratio(ctl.Seconds(), off.Seconds()))
	p("constant policy, the least any mutating admission policy can do to inject this sidecar,\n")
	p("takes %s; the compiled policy's own decisions (selection, conflicts, overrides, the\n", ratio(fl.Seconds(), off.Seconds()))
	p("status record in CEL, the validating policy) %s on top of it (with / constant). Medians\n", ratio(on.Seconds(), fl.Seconds()))
	p("of runs this short move with the machine's load (header), the per-round ratios show how much.\n\n")
	r.webhookTable(p)
	r.baselineTable(p)
	r.goal(rt <= 1.2, fmt.Sprintf("admission policy: creating %s Pods <= 1.2x the time without it", commas(a.Pods)), "%.2fx (median %s vs %s); the constant policy alone: %.2fx", rt, secs(on), secs(off), fl.Seconds()/off.Seconds())
	r.goal(injected == a.Pods*a.Rounds, "admission policy: every Pod created with it is injected", "%s of %s", commas(injected), commas(a.Pods*a.Rounds))

	if len(a.Latency) > 0 {
		p("**API server metrics**, summed over the runs of each side (histogram `_sum` / `_count`\n")
		p("deltas between scrapes of `/metrics` around each run, means per observation; labels that\n")
		p("do not tell the rows apart are left out; admission controllers whose mean moved by less\n")
		p("than 10 µs are left out too):\n\n")
		t = &table{head: []string{"series", "without: count", "mean", "pre-injected: count", "mean", "constant: count", "mean", "with: count", "mean", "with - without"}}
		hidden := 0
		for _, l := range a.Latency {
			mOff, okOff := l.mean(sideOff)
			mOn, okOn := l.mean(sideOn)
			short := shortSeries(l.Series)
			if strings.HasPrefix(l.Series, "apiserver_admission_controller_") && !strings.Contains(short, "AdmissionPolicy") &&
				okOff && okOn && math.Abs(mOn-mOff) < 10e-6 {
				hidden++
				continue
			}
			cells := []string{"`" + short + "`"}
			for _, side := range []string{sideOff, sideCtl, sideFloor, sideOn} {
				h, ok := l.Sides[side]
				m, okM := l.mean(side)
				if !ok || !okM {
					cells = append(cells, "-", "-")
					continue
				}
				cells = append(cells, commas(int(h.count)), micros(m))
			}
			diff := "-"
			if okOff && okOn {
				diff = micros(mOn - mOff)
			}
			t.add(append(cells, diff)...)
		}
		p("%s\n", t)
		if hidden > 0 {
			p("(%d admission controller rows left out.) ", hidden)
		}
		policyCheck := latencyMean(a.Latency, sideOn, "apiserver_mutating_admission_policy_check_duration_seconds")
		matchOn := latencyMean(a.Latency, sideOn, "apiserver_admission_match_condition_evaluation_seconds")
		post := latencyMeanDiff(a.Latency, "apiserver_request_duration_seconds")
		p("The policy's admission latency as the API server measures it: %s per Pod for the\n", micros(policyCheck))
		p("mutating policy (`apiserver_mutating_admission_policy_check_duration_seconds`: variables\n")
		p("and the JSON patch), %s per policy for the match conditions; the server's latency of\n", micros(matchOn))
		p("`POST pods` rose by %s. The built-in mutating plugins run a second time for every Pod\n", micros(post))
		p("the policy changed (the API server reinvokes them after a mutating policy or webhook\n")
		p("changes the object), hence their doubled counts. ")
		if a.CEL != nil {
			p("The CEL cost of the mutating policy on the bench Pod is %s\n", commas(int(a.CEL.maxRuntime())))
			p("units (below), so most of the policy's time goes to the plugin's other work on the\n")
			p("object (not broken down here). ")
		}
		p("`ResourceQuota`'s time moves between the sides too\n")
		p("(cause not investigated). The ValidatingAdmissionPolicy records\n")
		p("`apiserver_validating_admission_policy_check_*` only for a denial, a warning or an error\n")
		p("(below: the conflicting probes of the waits), never for the bench Pods; its plugin's row\n")
		p("above is its cost.\n\n")
	}
	if len(a.Families) > 0 {
		p("Metric families about CEL and admission policies the API server exposes (series, total\n")
		p("count at the end of the part): ")
		for i, f := range a.Families {
			if i > 0 {
				p(", ")
			}
			p("`%s` (%d, %s)", f.Name, f.Samples, commas(int(f.Total)))
		}
		p(". `apiserver_cel_*` time CRD validation rules only. None reports a CEL cost: the cost\n")
		p("is visible only as the budgets it is charged to, hence the table below.\n\n")
	}
	if c := a.CEL; c != nil {
		r.celSection(p, c)
	}
	return b.String()
}

// latencyMean is the mean of the first series of name on side.
func latencyMean(rows []latencyRow, side, name string) float64 {
	for _, l := range rows {
		if strings.HasPrefix(l.Series, name+"{") {
			if m, ok := l.mean(side); ok {
				return m
			}
		}
	}
	return 0
}

// latencyMeanDiff is with minus without of the first series of name.
func latencyMeanDiff(rows []latencyRow, name string) float64 {
	return latencyMean(rows, sideOn, name) - latencyMean(rows, sideOff, name)
}

// celSection writes the CEL cost of the policy's expressions with p.
func (r *report) celSection(p func(format string, args ...any), c *celReport) {
	p("**CEL cost** of every expression of the policy (`hack/apiserver/celcost`, a package of the\n")
	p("nested module that builds kube-apiserver, run with `go run` in %s): each is compiled\n", secs(c.Elapsed))
	p("with the API server's CEL environment for admission policies (`environment.MustBaseEnvSet`\n")
	p("at compatibility version %s, the variables of `plugin/cel`, the composited `variables`,\n", c.CompatibilityVersion)
	p("JSONPatch types for the mutation) and its worst case estimated by cel-go with the API\n")
	p("server's cost estimator. **Estimated max**: %s. The\n", c.TypedMethod)
	p("API server itself compiles `object` as dynamic and estimates nothing when a policy is\n")
	p("created: **dynamic** is that environment's estimate, unbounded wherever a list of the\n")
	p("object is iterated. \"Unbounded\" also marks lists held in policy variables, whose size\n")
	p("cel-go does not carry from one variable to the next. Limits: `PerCallLimit` %s per\n", commas(int(c.PerCallLimit)))
	p("expression at run time, `RuntimeCELCostBudget` %s per evaluation of a policy's variables\n", commas(int(c.RuntimeBudget)))
	p("and mutations (or validations), `RuntimeCELCostBudgetMatchConditions` %s for its match\n", commas(int(c.MatchConditionBudget)))
	p("conditions. **Runtime** is what the API server's own evaluator (`ForInput`) charges on the\n")
	p("bench Pod, %s (for a variable: `variables.NAME` alone, with the variables it\n", c.Pod)
	p("uses).\n\n")
	t := &table{head: []string{"policy", "expression", "chars", "estimated max cost", "share of PerCallLimit", "dynamic", "runtime cost (bench Pod)"}}
	var maxShare float64
	var maxExpr string
	unbounded, over := 0, 0
	for _, x := range c.Expressions {
		rtc := "-"
		if x.Runtime != nil {
			rtc = commas(int(x.Runtime.Cost))
			if x.Runtime.Error != "" {
				rtc = "error: " + x.Runtime.Error
			}
		}
		t.add("`"+x.Policy+"`", x.Field, commas(x.Length), x.Typed.String(), x.Typed.share(c.PerCallLimit), x.Dynamic.String(), rtc)
		switch {
		case x.Typed.Error != "":
		case x.Typed.Unbounded:
			unbounded++
		default:
			s := float64(x.Typed.Max) / float64(c.PerCallLimit)
			if s > maxShare {
				maxShare, maxExpr = s, x.Policy+" "+x.Field
			}
			if s > 1 {
				over++
			}
		}
	}
	p("%s\n", t)
	if len(c.Totals) > 0 {
		t = &table{head: []string{"policy", "one admission of the bench Pod", "runtime cost", "budget", "share"}}
		for _, x := range c.Totals {
			t.add("`"+x.Policy+"`", x.What, commas(int(x.Cost)), commas(int(x.Budget)), pct(float64(x.Cost)/float64(x.Budget)))
		}
		p("%s\n", t)
	}
	maxRuntime := c.maxRuntime()
	p("Of %d expressions, %d have an unbounded estimate and %d more a bounded one above\n", len(c.Expressions), unbounded, over)
	p("`PerCallLimit`; the largest bounded share is %s (%s).\n", pct(maxShare), maxExpr)
	p("These are worst cases for a Pod of 3 MiB (hundreds of thousands of containers, strings of\n")
	p("megabytes), which the API server refuses statically only for CRD validation rules; for\n")
	p("admission policies it stops an evaluation that exceeds a limit at run time. On the bench\n")
	p("Pod the dearest evaluation costs %s units, %s of its budget.\n\n", commas(int(maxRuntime)), pct(float64(maxRuntime)/float64(c.RuntimeBudget)))
}

// webhookTable compares the policy with the zero-work webhook, the floor
// of every webhook injector, in wall time and in the API server's CPU per
// Pod, round by round.
func (r *report) webhookTable(p func(string, ...any)) {
	a := r.admission
	rounds := byRound(a.Runs, func(x admissionRun) (int, string) { return x.Round, x.Side })
	if len(rounds) == 0 || rounds[0][sideWebhook].Wall == 0 {
		return
	}
	sides := []string{sideOff, sideFloor, sideWebhook, sideOn}
	perPod := func(x admissionRun) string {
		if x.CPU < 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", x.CPU*1000/float64(a.Pods))
	}
	p("**Beside a webhook.** In the same rounds, the **zero-work webhook** (`hack/bench/admission_webhook.go`):\n")
	p("a TLS server on loopback that answers every review with one constant JSON patch adding what\n")
	p("the policy adds, the floor of every webhook injector. Wall time and the API server's CPU per\n")
	p("Pod (`process_cpu_seconds_total` around each run, ms):\n\n")
	t := &table{head: []string{"round", "off", "constant MAP", "zero-work webhook", "policy", "policy / webhook", "policy / constant", "webhook / off",
		"CPU ms/Pod: off", "constant", "webhook", "policy", "CPU policy / webhook"}}
	var cpu = map[string][]float64{}
	for i := 0; i < a.Rounds; i++ {
		x := rounds[i]
		for _, sd := range sides {
			cpu[sd] = append(cpu[sd], x[sd].CPU)
		}
		t.add(fmt.Sprint(i+1), secs(x[sideOff].Wall), secs(x[sideFloor].Wall), secs(x[sideWebhook].Wall), secs(x[sideOn].Wall),
			ratio(x[sideOn].Wall.Seconds(), x[sideWebhook].Wall.Seconds()), ratio(x[sideOn].Wall.Seconds(), x[sideFloor].Wall.Seconds()),
			ratio(x[sideWebhook].Wall.Seconds(), x[sideOff].Wall.Seconds()),
			perPod(x[sideOff]), perPod(x[sideFloor]), perPod(x[sideWebhook]), perPod(x[sideOn]), ratio(x[sideOn].CPU, x[sideWebhook].CPU))
	}
	med := func(sd string) time.Duration { return medianOf(a.walls(sd)) }
	medCPU := func(sd string) float64 { return medianFloat(cpu[sd]) }
	ms := func(sd string) string { return fmt.Sprintf("%.2f", medCPU(sd)*1000/float64(a.Pods)) }
	t.add("**median**", secs(med(sideOff)), secs(med(sideFloor)), secs(med(sideWebhook)), secs(med(sideOn)),
		"**"+ratio(med(sideOn).Seconds(), med(sideWebhook).Seconds())+"**", ratio(med(sideOn).Seconds(), med(sideFloor).Seconds()),
		ratio(med(sideWebhook).Seconds(), med(sideOff).Seconds()), ms(sideOff), ms(sideFloor), ms(sideWebhook), ms(sideOn),
		"**"+ratio(medCPU(sideOn), medCPU(sideWebhook))+"**")
	p("%s\n", t)
	wall := med(sideOn).Seconds() / med(sideWebhook).Seconds()
	cpuRatio := medCPU(sideOn) / medCPU(sideWebhook)
	r.goal(wall <= 1, "admission policy: wall time <= the zero-work webhook's", "%.2fx (median %s vs %s)", wall, secs(med(sideOn)), secs(med(sideWebhook)))
	r.goal(cpuRatio <= 1, "admission policy: API server CPU per Pod <= the zero-work webhook's", "%.2fx (%s vs %s ms)", cpuRatio, ms(sideOn), ms(sideWebhook))
}

// baselineTable compares the policy with the -admission-baseline policy
// run in the same rounds: the change between two versions of the policy,
// measured as a ratio in one run rather than across two noisy runs.
func (r *report) baselineTable(p func(string, ...any)) {
	a := r.admission
	if a.Baseline == "" {
		return
	}
	rounds := byRound(a.Runs, func(x admissionRun) (int, string) { return x.Round, x.Side })
	perPod := func(x admissionRun) float64 { return x.CPU * 1000 / float64(a.Pods) }
	p("**Against a baseline policy.** `%s`, installed in turn with this policy in every round\n", filepath.Base(a.Baseline))
	p("(ABBA order); both inject every Pod. Wall time and the API server's CPU per Pod (ms):\n\n")
	t := &table{head: []string{"round", "policy", "baseline", "policy / baseline", "CPU ms/Pod: policy", "baseline", "CPU policy / baseline"}}
	var walls, cpus []float64
	for i := 0; i < a.Rounds; i++ {
		on, base := rounds[i][sideOn], rounds[i][sideBaseline]
		walls = append(walls, on.Wall.Seconds()/base.Wall.Seconds())
		cpus = append(cpus, on.CPU/base.CPU)
		t.add(fmt.Sprint(i+1), secs(on.Wall), secs(base.Wall), ratio(on.Wall.Seconds(), base.Wall.Seconds()),
			fmt.Sprintf("%.2f", perPod(on)), fmt.Sprintf("%.2f", perPod(base)), ratio(on.CPU, base.CPU))
	}
	t.add("**median of the round ratios**", "", "", fmt.Sprintf("**%.2fx**", medianFloat(walls)), "", "", fmt.Sprintf("**%.2fx**", medianFloat(cpus)))
	p("%s\n", t)
	lower := 0
	for _, c := range cpus {
		if c < 1 {
			lower++
		}
	}
	p("The policy used less API server CPU than the baseline in %d of %d rounds.\n\n", lower, len(cpus))
}

// medianFloat is the median of v (the upper one of an even count), 0 for
// none; v is left as it was.
func medianFloat(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = append([]float64(nil), v...)
	sort.Float64s(v)
	return v[len(v)/2]
}
