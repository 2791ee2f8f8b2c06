package control

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/pulsewire/pulsewire/control/metrics"
	"github.com/pulsewire/pulsewire/control/webhook"
	"github.com/pulsewire/pulsewire/storage"
	"github.com/pulsewire/pulsewire/storage/storagetest"
)

// withPrivateWebhooks lets webhooks reach loopback, where the tests'
// receivers listen.
func withPrivateWebhooks() envOption {
	return func(e *testEnv, _ *storage.Options) { e.svcOpt = append(e.svcOpt, AllowPrivateWebhooks()) }
}

// withRealClock stamps the store with the real time, which the retries of
// a dispatcher wait on.
func withRealClock() envOption {
	return func(_ *testEnv, o *storage.Options) { o.Now = nil }
}

// quickDispatch is a dispatcher whose waits are short enough for a test.
var quickDispatch = Dispatch{Timeout: 2 * time.Second, Poll: 10 * time.Millisecond, FirstRetry: 20 * time.Millisecond, MaxRetry: 100 * time.Millisecond}

// dispatch runs svc's dispatcher until the returned stop is called (or the
// test ends); stop returns once it has.
func dispatch(t *testing.T, svc *Service, d Dispatch) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); svc.DeliverWebhooks(ctx, d) }()
	stop = sync.OnceFunc(func() { cancel(); <-done })
	t.Cleanup(stop)
	return stop
}

// received is a request a receiver got.
type received struct {
	header http.Header
	body   []byte
}

// receiver is a client's webhook endpoint: a real HTTP server on loopback
// that answers with answer (200 when nil) and keeps what it got.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []received
	answer func(n int, w http.ResponseWriter, r *http.Request) // n counts from 1
}

func newReceiver(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	rc := &receiver{answer: answer}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, received{r.Header.Clone(), body})
		n := len(rc.got)
		rc.mu.Unlock()
		if rc.answer != nil {
			rc.answer(n, w, r)
		}
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// eventually waits up to 10 s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: %s", what)
		}
	}
}

// registered is an endpoint as its creation answered it.
type registered struct {
	ID     string `json:"id"`
	Secret string `json:"secret"`
}

// register creates an endpoint of the key's client at url.
func (e *testEnv) register(key, url string, events ...string) registered {
	e.t.Helper()
	if len(events) == 0 {
		events = webhookEvents
	}
	r := e.do("POST", "/webhook-endpoints", key, map[string]any{"url": url, "events": events})
	wantStatus(e.t, r, http.StatusCreated)
	var w registered
	if err := json.Unmarshal(r.body, &w); err != nil || w.Secret == "" {
		e.t.Fatalf("created %s: %v", r.body, err)
	}
	return w
}

// runMeasure creates and runs a measure of the key's client from a contact
// sensor's signal, and returns its id.
func (e *testEnv) runMeasure(key string) string {
	e.t.Helper()
	body, _ := json.Marshal(pulseSignal("cppg", 1.2, 12))
	r := e.send("/measures/cppg/signal", key, "application/json", bytes.NewReader(body))
	wantStatus(e.t, r, http.StatusCreated)
	return r.json(e.t)["id"].(string)
}

// deliveries is the delivery log of endpoint.
func (e *testEnv) deliveries(key, endpoint string) []WebhookDeliveryView {
	e.t.Helper()
	r := e.do("GET", "/webhook-endpoints/"+endpoint+"/deliveries", key, nil)
	wantStatus(e.t, r, http.StatusOK)
	var ds []WebhookDeliveryView
	if err := json.Unmarshal(r.body, &ds); err != nil {
		e.t.Fatal(err)
	}
	return ds
}

// verified checks a delivery's signature with secret and returns its
// payload.
func verified(t *testing.T, secret string, got received) WebhookPayload {
	t.Helper()
	if err := webhook.Verify(secret, got.header.Get(webhook.SignatureHeader), got.body, time.Now(), 0); err != nil {
		t.Fatalf("signature of %s: %v", got.body, err)
	}
	var p WebhookPayload
	if err := json.Unmarshal(got.body, &p); err != nil {
		t.Fatal(err)
	}
	if got.header.Get(webhook.EventIDHeader) != p.ID || got.header.Get("Content-Type") != "application/json" {
		t.Fatalf("headers %v for event %s", got.header, p.ID)
	}
	return p
}

// TestWebhookEndpointRoutes: an endpoint is shown with its secret once,
// then without; another client's answers exactly like a missing one.
func TestWebhookEndpointRoutes(t *testing.T) {
	e := newTestEnv(t, Production, withPrivateWebhooks())
	_, key := e.client("acme")
	_, otherKey := e.client("other")
	r := e.do("POST", "/webhook-endpoints", key, map[string]any{"url": "https://hooks.example/pw", "events": []string{"measure.ended"}})
	wantStatus(t, r, http.StatusCreated)
	created := r.json(t)
	id, secret := created["id"].(string), created["secret"].(string)
	if !strings.HasPrefix(secret, "whsec_") || len(secret) != 6+64 || created["url"] != "https://hooks.example/pw" {
		t.Fatalf("created %s", r.body)
	}
	r = e.do("GET", "/webhook-endpoints/"+id, key, nil)
	wantStatus(t, r, http.StatusOK)
	if bytes.Contains(r.body, []byte(secret)) || bytes.Contains(r.body, []byte("secret")) {
		t.Fatalf("the secret shows again: %s", r.body)
	}
	r = e.do("GET", "/webhook-endpoints", key, nil)
	wantStatus(t, r, http.StatusOK)
	if bytes.Contains(r.body, []byte(secret)) || !bytes.Contains(r.body, []byte(id)) {
		t.Fatalf("list: %s", r.body)
	}
	if r := e.do("GET", "/webhook-endpoints", otherKey, nil); string(r.body) != "[]" {
		t.Fatalf("another client's list: %s", r.body)
	}
	missing := e.do("GET", "/webhook-endpoints/0f8e0b52-3c8c-4f4e-9a67-8b7f3f1d2a10", key, nil)
	wantStatus(t, missing, http.StatusNotFound)
	for _, r := range []response{
		e.do("GET", "/webhook-endpoints/"+id, otherKey, nil),
		e.do("DELETE", "/webhook-endpoints/"+id, otherKey, nil),
		e.do("GET", "/webhook-endpoints/"+id+"/deliveries", otherKey, nil),
		e.do("POST", "/webhook-endpoints/"+id+"/deliveries/0f8e0b52-3c8c-4f4e-9a67-8b7f3f1d2a10/redeliver", key, nil),
	} {
		if r.status != missing.status || !bytes.Equal(r.body, missing.body) {
			t.Fatalf("another client's endpoint: %d %s, want %d %s", r.status, r.body, missing.status, missing.body)
		}
	}
	wantStatus(t, e.do("GET", "/webhook-endpoints/not-an-id", key, nil), http.StatusBadRequest)
	wantStatus(t, e.do("DELETE", "/webhook-endpoints/"+id, key, nil), http.StatusOK)
	wantStatus(t, e.do("GET", "/webhook-endpoints/"+id, key, nil), http.StatusNotFound)
	wantStatus(t, e.do("DELETE", "/webhook-endpoints/"+id, key, nil), http.StatusNotFound)
	if strings.Contains(e.logs.String(), secret) {
		t.Fatal("the secret is in the log")
	}
}

// TestWebhookEndpointValidation: every rule of the body, with each limit at
// its edge and past it.
func TestWebhookEndpointValidation(t *testing.T) {
	e := newTestEnv(t, Production, withPrivateWebhooks())
	_, key := e.client("acme")
	base := "https://hooks.example/"
	atEdge := base + strings.Repeat("a", maxWebhookURL-len(base))
	wantStatus(t, e.do("POST", "/webhook-endpoints", key, map[string]any{"url": atEdge, "events": []string{"measure.deleted"}}), http.StatusCreated)
	wantStatus(t, e.do("POST", "/webhook-endpoints", key, map[string]any{"url": "http://hooks.example", "events": webhookEvents}), http.StatusCreated)
	for _, port := range []string{"1", "65535"} {
		wantStatus(t, e.do("POST", "/webhook-endpoints", key, map[string]any{"url": "https://hooks.example:" + port + "/", "events": webhookEvents}), http.StatusCreated)
	}
	for _, c := range []struct {
		body any
		want string
	}{
		{map[string]any{"url": atEdge + "a", "events": webhookEvents}, "url must be shorter than or equal to 2048 characters"},
		{map[string]any{"events": webhookEvents}, "url should not be empty"},
		{map[string]any{"url": 7, "events": webhookEvents}, "url must be a string"},
		{map[string]any{"url": "ftp://hooks.example/", "events": webhookEvents}, "url must be an http or https URL with a host"},
		{map[string]any{"url": "https:///path", "events": webhookEvents}, "url must be an http or https URL with a host"},
		{map[string]any{"url": "hooks.example/pw", "events": webhookEvents}, "url must be an http or https URL with a host"},
		{map[string]any{"url": "https://u:p@hooks.example/", "events": webhookEvents}, "url must not hold a user name or password"},
		{map[string]any{"url": "https://hooks.example:0/", "events": webhookEvents}, "url must have a port from 1 to 65535, or none"},
		{map[string]any{"url": "https://hooks.example:65536/", "events": webhookEvents}, "url must have a port from 1 to 65535, or none"},
		{map[string]any{"url": base}, "events should not be empty"},
		{map[string]any{"url": base, "events": []string{}}, "events should not be empty"},
		{map[string]any{"url": base, "events": "measure.ended"}, "events must be an array"},
		{map[string]any{"url": base, "events": []string{"measure.created"}}, "events.0 must be one of the following values: measure.ended, measure.deleted"},
		{map[string]any{"url": base, "events": []any{"measure.ended", 3}}, "events.1 must be one of the following values: measure.ended, measure.deleted"},
		{map[string]any{"url": base, "events": []string{"measure.ended", "measure.ended"}}, "events.1: measure.ended is given twice"},
		{map[string]any{"url": base, "events": webhookEvents, "secret": "mine"}, "property secret should not exist"},
		{"[]", "the body must be a JSON object"},
	} {
		r := e.do("POST", "/webhook-endpoints", key, c.body)
		if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), `"`+c.want+`"`) {
			t.Errorf("%v: %d %s, want 400 with %q", c.body, r.status, r.body, c.want)
		}
	}
}

// TestWebhookEndpointLimit: a client holds MaxWebhookEndpoints endpoints,
// and one more only once it has deleted one.
func TestWebhookEndpointLimit(t *testing.T) {
	e := newTestEnv(t, Production, withPrivateWebhooks())
	_, key := e.client("acme")
	var last registered
	for i := range MaxWebhookEndpoints {
		last = e.register(key, fmt.Sprintf("https://hooks.example/%d", i))
	}
	r := e.do("POST", "/webhook-endpoints", key, map[string]any{"url": "https://hooks.example/x", "events": webhookEvents})
	if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "a client holds at most 16 webhook endpoints: delete one first") {
		t.Fatalf("past the limit: %d %s", r.status, r.body)
	}
	wantStatus(t, e.do("DELETE", "/webhook-endpoints/"+last.ID, key, nil), http.StatusOK)
	e.register(key, "https://hooks.example/x")
}

// TestWebhookPrivateAddresses: without the operator's leave, an endpoint
// on loopback or a private range is refused at registration, and a
// delivery to a host that now is on one is refused when it connects.
func TestWebhookPrivateAddresses(t *testing.T) {
	e := newTestEnv(t, Production, withRealClock())
	_, key := e.client("acme")
	for _, host := range []string{
		"127.0.0.1", "localhost", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "0.0.0.0",
		"100.64.0.1", "224.0.0.1", "255.255.255.255", "[::1]", "[::]", "[fe80::1]", "[fc00::1]", "[ff02::1]", "[::ffff:127.0.0.1]",
		"198.18.0.1", "240.0.0.1", "192.0.0.8", "203.0.113.5", "[fec0::1]", "[100::1]", "[2001:db8::1]", "[::ffff:0:a00:1]",
	} {
		r := e.do("POST", "/webhook-endpoints", key, map[string]any{"url": "http://" + host + ":8080/hook", "events": webhookEvents})
		if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "a loopback, private, link-local, reserved, unspecified or multicast address, which this server does not post to") {
			t.Errorf("%s: %d %s", host, r.status, r.body)
		}
	}
	// A public address needs no look-up and passes.
	wantStatus(t, e.do("POST", "/webhook-endpoints", key, map[string]any{"url": "https://93.184.215.14/hook", "events": webhookEvents}), http.StatusCreated)

	// An endpoint on loopback, stored while the server allowed it: the
	// server that does not is refused the connection.
	rc := newReceiver(t, nil)
	allowing := NewService(Production, e.db, e.media, AllowPrivateWebhooks())
	acme, _ := e.svc.Authenticate(context.Background(), key)
	w, err := allowing.CreateWebhookEndpoint(context.Background(), acme, NewWebhookEndpoint{URL: rc.URL + "/hook", Events: webhookEvents})
	if err != nil {
		t.Fatal(err)
	}
	dispatch(t, e.svc, quickDispatch)
	e.runMeasure(key)
	eventually(t, "a refused attempt in the log", func() bool {
		ds := e.deliveries(key, w.ID)
		return len(ds) == 1 && ds[0].Attempts >= 1
	})
	d := e.deliveries(key, w.ID)[0]
	if d.Outcome != storage.DeliveryPending || d.LastStatus != nil || d.LastError == nil ||
		*d.LastError != "refused: a loopback, private, link-local, reserved, unspecified or multicast address" {
		t.Fatalf("refused delivery: %+v", d)
	}
	if n := len(rc.requests()); n != 0 {
		t.Fatalf("the receiver got %d requests", n)
	}
}

// TestWebhookDelivered: a measure's end and its deletion reach the
// endpoint signed with its secret, carrying ids, status, kind and the
// environment and nothing else; the log shows them, and a redelivery sends
// the same event again.
func TestWebhookDelivered(t *testing.T) {
	m := metrics.New()
	e := newTestEnv(t, Production, withPrivateWebhooks(), withRealClock(), withMetrics(m))
	_, key := e.client("acme")
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	w := e.register(key, rc.URL+"/hook")
	dispatch(t, e.svc, quickDispatch)
	id := e.runMeasure(key)
	eventually(t, "measure.ended delivered", func() bool { return len(rc.requests()) == 1 })
	ended := verified(t, w.Secret, rc.requests()[0])
	kind := "cppg"
	want := WebhookPayload{ID: ended.ID, Type: "measure.ended", CreatedAt: ended.CreatedAt, Environment: "production",
		Measure: WebhookMeasure{ID: id, Status: "ended", Kind: &kind}}
	gotJSON, _ := json.Marshal(ended)
	wantJSON, _ := json.Marshal(want)
	if ended.ID == "" || !bytes.Equal(gotJSON, wantJSON) {
		t.Fatalf("payload %+v, want %+v", ended, want)
	}
	// Exactly these members: no variables, no person data.
	var members map[string]json.RawMessage
	json.Unmarshal(rc.requests()[0].body, &members)
	if len(members) != 5 {
		t.Fatalf("payload members: %s", rc.requests()[0].body)
	}
	wantStatus(t, e.do("DELETE", "/measures/"+id, key, nil), http.StatusOK)
	eventually(t, "measure.deleted delivered", func() bool { return len(rc.requests()) == 2 })
	deleted := verified(t, w.Secret, rc.requests()[1])
	if deleted.Type != "measure.deleted" || deleted.Measure.ID != id || deleted.ID == ended.ID {
		t.Fatalf("deleted: %+v", deleted)
	}
	eventually(t, "both delivered in the log", func() bool {
		ds := e.deliveries(key, w.ID)
		return len(ds) == 2 && ds[0].Outcome == "delivered" && ds[1].Outcome == "delivered"
	})
	log := e.deliveries(key, w.ID)
	if d := log[1]; d.Event != "measure.ended" || d.EventID != ended.ID || d.MeasureID != id || d.Attempts != 1 ||
		*d.LastStatus != 204 || d.LastError != nil || d.NextAttemptAt != nil || d.LastAttemptAt == nil {
		t.Fatalf("log %+v", d)
	}
	r := e.do("POST", "/webhook-endpoints/"+w.ID+"/deliveries/"+log[1].ID+"/redeliver", key, nil)
	wantStatus(t, r, http.StatusOK)
	eventually(t, "redelivered", func() bool { return len(rc.requests()) == 3 })
	if again := verified(t, w.Secret, rc.requests()[2]); again.ID != ended.ID || again.Type != "measure.ended" {
		t.Fatalf("redelivery %+v, want the same event %s", again, ended.ID)
	}
	eventually(t, "the redelivery logged", func() bool {
		d := e.deliveries(key, w.ID)[1]
		return d.Attempts == 2 && d.Outcome == "delivered"
	})
	wantSeries(t, scrape(t, m), `pulsewire_webhook_deliveries_total{env="production",outcome="delivered"} 3`)
	if strings.Contains(e.logs.String(), w.Secret) {
		t.Fatal("the secret is in the log")
	}
}

// TestWebhookRetries: an answer of 500 and an answer that never comes are
// tried again, and the third attempt delivers the same event.
func TestWebhookRetries(t *testing.T) {
	m := metrics.New()
	e := newTestEnv(t, Production, withPrivateWebhooks(), withRealClock(), withMetrics(m))
	_, key := e.client("acme")
	d := quickDispatch
	d.Timeout = time.Second // the second attempt waits it out; the others answer at once
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		switch n {
		case 1:
			w.WriteHeader(http.StatusInternalServerError)
		case 2:
			<-r.Context().Done() // past the timeout: the dispatcher hangs up
		}
	})
	w := e.register(key, rc.URL, "measure.ended")
	dispatch(t, e.svc, d)
	e.runMeasure(key)
	eventually(t, "three attempts, the last delivered", func() bool {
		ds := e.deliveries(key, w.ID)
		return len(ds) == 1 && ds[0].Outcome == "delivered"
	})
	got := rc.requests()
	if len(got) != 3 {
		t.Fatalf("%d requests, want 3", len(got))
	}
	for _, g := range got {
		if p := verified(t, w.Secret, g); p.ID != verified(t, w.Secret, got[0]).ID {
			t.Fatal("the retries carry another event id")
		}
	}
	if log := e.deliveries(key, w.ID)[0]; log.Attempts != 3 || *log.LastStatus != 200 {
		t.Fatalf("log %+v", log)
	}
	wantSeries(t, scrape(t, m),
		`pulsewire_webhook_deliveries_total{env="production",outcome="delivered"} 1`,
		`pulsewire_webhook_deliveries_total{env="production",outcome="retrying"} 2`)
}

// TestWebhookRedirectIsRetried: an endpoint that answers with a redirect
// has not taken the delivery. The redirect is not followed, since it may
// point anywhere, a private address included, and would carry the signed
// event there; the attempt counts as failed and is made again at the
// endpoint's own URL.
func TestWebhookRedirectIsRetried(t *testing.T) {
	e := newTestEnv(t, Production, withPrivateWebhooks(), withRealClock())
	_, key := e.client("acme")
	var mu sync.Mutex
	var asked []string
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Method+" "+r.URL.Path)
		mu.Unlock()
		if n == 1 {
			http.Redirect(w, r, "/moved", http.StatusTemporaryRedirect)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	w := e.register(key, rc.URL+"/hook", "measure.ended")
	dispatch(t, e.svc, quickDispatch)
	e.runMeasure(key)
	eventually(t, "measure.ended delivered", func() bool {
		ds := e.deliveries(key, w.ID)
		return len(ds) == 1 && ds[0].Outcome == "delivered"
	})
	if log := e.deliveries(key, w.ID)[0]; log.Attempts != 2 || log.LastStatus == nil || *log.LastStatus != http.StatusNoContent {
		t.Fatalf("%d attempts, the last answered %v; want 2, the last answered 204", log.Attempts, log.LastStatus)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"POST /hook", "POST /hook"}; fmt.Sprint(asked) != fmt.Sprint(want) {
		t.Fatalf("requests %q, want %q", asked, want)
	}
}

// TestWebhookTimeoutLogged: an attempt with no answer within the timeout
// says so in the log and is due again later.
func TestWebhookTimeoutLogged(t *testing.T) {
	e := newTestEnv(t, Production, withPrivateWebhooks(), withRealClock())
	_, key := e.client("acme")
	d := quickDispatch
	d.Timeout, d.FirstRetry, d.MaxRetry = 200*time.Millisecond, time.Hour, time.Hour
	rc := newReceiver(t, func(_ int, _ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	w := e.register(key, rc.URL, "measure.ended")
	dispatch(t, e.svc, d)
	e.runMeasure(key)
	eventually(t, "an attempt logged", func() bool { return e.deliveries(key, w.ID)[0].Attempts == 1 })
	log := e.deliveries(key, w.ID)[0]
	next, _ := time.Parse(timeFormat, *log.NextAttemptAt)
	if log.Outcome != "pending" || log.LastStatus != nil || *log.LastError != "no answer within 200ms" ||
		time.Until(next) < 29*time.Minute || time.Until(next) > time.Hour {
		t.Fatalf("log %+v", log)
	}
}

// TestWebhookSlowEndpoint: an endpoint that does not answer holds up
// neither the runs nor another endpoint's deliveries.
func TestWebhookSlowEndpoint(t *testing.T) {
	e := newTestEnv(t, Production, withPrivateWebhooks(), withRealClock())
	_, key := e.client("acme")
	release := make(chan struct{})
	slow := newReceiver(t, func(_ int, _ http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	fast := newReceiver(t, nil)
	e.register(key, slow.URL, "measure.ended")
	e.register(key, fast.URL, "measure.ended")
	d := quickDispatch
	d.Timeout = time.Minute
	dispatch(t, e.svc, d)
	e.runMeasure(key)
	eventually(t, "the slow endpoint holds its first delivery", func() bool { return len(slow.requests()) == 1 })
	// Both ends while the slow endpoint holds on: the run answers, and
	// the other endpoint gets its deliveries.
	e.runMeasure(key)
	eventually(t, "the fast endpoint got both", func() bool { return len(fast.requests()) == 2 })
	if n := len(slow.requests()); n != 1 {
		t.Fatalf("the slow endpoint got %d deliveries at once", n)
	}
	close(release)
	eventually(t, "the slow endpoint got both", func() bool { return len(slow.requests()) == 2 })
}

// TestWebhookSurvivesRestart: an event written while no dispatcher runs,
// and one whose attempt a stop cut short, are delivered once the server is
// back on the same database.
func TestWebhookSurvivesRestart(t *testing.T) {
	e := newTestEnv(t, Production, withPrivateWebhooks(), withRealClock())
	_, key := e.client("acme")
	// The first request hangs until the stop cuts it short.
	rc := newReceiver(t, func(n int, _ http.ResponseWriter, r *http.Request) {
		if n == 1 {
			<-r.Context().Done()
		}
	})
	w := e.register(key, rc.URL, "measure.ended")
	first := e.runMeasure(key) // no dispatcher yet
	stop := dispatch(t, e.svc, quickDispatch)
	eventually(t, "the first attempt under way", func() bool { return len(rc.requests()) == 1 })
	stop()
	second := e.runMeasure(key) // the dispatcher is stopped
	if err := e.db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err := storage.Open(context.Background(), e.file, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	e.db, e.svc = db, NewService(Production, db, e.media, AllowPrivateWebhooks())
	e.api = NewAPI(e.svc, Options{})
	dispatch(t, e.svc, quickDispatch)
	eventually(t, "both delivered after the restart", func() bool {
		ds := e.deliveries(key, w.ID)
		return len(ds) == 2 && ds[0].Outcome == "delivered" && ds[1].Outcome == "delivered"
	})
	got := map[string]bool{}
	for _, g := range rc.requests()[1:] {
		got[verified(t, w.Secret, g).Measure.ID] = true
	}
	if !got[first] || !got[second] {
		t.Fatalf("after the restart the endpoint got %v, want %s and %s", got, first, second)
	}
	// The attempt cut short is not counted: it was made again.
	for _, d := range e.deliveries(key, w.ID) {
		if d.Attempts != 1 {
			t.Fatalf("log %+v", d)
		}
	}
}

// TestWebhookEnvironmentsApart: an event of one environment reaches only
// that environment's endpoints, and says which it is.
func TestWebhookEnvironmentsApart(t *testing.T) {
	prod := newTestEnv(t, Production, withPrivateWebhooks(), withRealClock())
	test := newTestEnv(t, Test, withPrivateWebhooks(), withRealClock())
	_, prodKey := prod.client("acme")
	_, testKey := test.client("acme")
	prodRC, testRC := newReceiver(t, nil), newReceiver(t, nil)
	prodW := prod.register(prodKey, prodRC.URL, "measure.ended")
	testW := test.register(testKey, testRC.URL, "measure.ended")
	dispatch(t, prod.svc, quickDispatch)
	dispatch(t, test.svc, quickDispatch)
	prod.runMeasure(prodKey)
	eventually(t, "the production event delivered", func() bool { return len(prodRC.requests()) == 1 })
	test.runMeasure(testKey)
	eventually(t, "the test event delivered", func() bool { return len(testRC.requests()) == 1 })
	if p := verified(t, prodW.Secret, prodRC.requests()[0]); p.Environment != "production" {
		t.Fatalf("production payload %+v", p)
	}
	if p := verified(t, testW.Secret, testRC.requests()[0]); p.Environment != "test" {
		t.Fatalf("test payload %+v", p)
	}
	if len(prodRC.requests()) != 1 || len(testRC.requests()) != 1 {
		t.Fatalf("production endpoint got %d, test endpoint %d", len(prodRC.requests()), len(testRC.requests()))
	}
}

// TestWebhooksSeveralInstancesOnPostgres: two servers on one PostgreSQL
// database deliver the events written by either, each once to each
// endpoint, retries included.
func TestWebhooksSeveralInstancesOnPostgres(t *testing.T) {
	ctx := context.Background()
	pg, err := storagetest.StartPostgres(ctx, storagetest.PostgresOptions{})
	if err != nil {
		storagetest.Unavailable(t, "PostgreSQL", err)
	}
	t.Cleanup(func() { pg.Stop() })
	open := func(instance string) *Service {
		db, err := storage.OpenPostgres(ctx, pg.URL, "webhooks", storage.Options{Instance: instance})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return NewService(Production, db, nil, AllowPrivateWebhooks())
	}
	one, two := open("one"), open("two")
	acme, _, err := one.CreateClient(ctx, NewClient{Name: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	receivers := []*receiver{
		newReceiver(t, nil),
		newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
			if n%3 == 1 {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		}),
		newReceiver(t, nil),
	}
	var endpoints []storage.WebhookEndpoint
	for _, rc := range receivers {
		w, err := one.CreateWebhookEndpoint(ctx, acme, NewWebhookEndpoint{URL: rc.URL, Events: webhookEvents})
		if err != nil {
			t.Fatal(err)
		}
		endpoints = append(endpoints, w)
	}
	const events = 8
	for i := range events {
		svc := []*Service{one, two}[i%2]
		id := uuid.NewString()
		if _, err := svc.db.StartNewMeasure(ctx, acme, id, storage.NewMeasure{}, storage.KindCPPG); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.db.EndMeasure(ctx, acme, id, storage.MeasureEnd{Kind: storage.KindCPPG}); err != nil {
			t.Fatal(err)
		}
	}
	dispatch(t, one, quickDispatch)
	dispatch(t, two, quickDispatch)
	for i, w := range endpoints {
		eventually(t, fmt.Sprintf("endpoint %d has every event delivered", i), func() bool {
			ds, err := one.WebhookDeliveries(ctx, acme, w.ID)
			if err != nil || len(ds) != events {
				return false
			}
			for _, d := range ds {
				if d.Outcome != storage.DeliveryDelivered {
					return false
				}
			}
			return true
		})
	}
	for i, rc := range receivers {
		ok := map[string]int{}
		for _, g := range rc.requests() {
			ok[verified(t, endpoints[i].Secret, g).ID]++
		}
		if len(ok) != events {
			t.Fatalf("endpoint %d got %d events, want %d", i, len(ok), events)
		}
		if i != 1 && len(rc.requests()) != events {
			t.Fatalf("endpoint %d got %d requests for %d events: %v", i, len(rc.requests()), events, ok)
		}
	}
}

// TestWebhookBackoff: the waits double from the first to the longest, each
// shortened by at most half, however many attempts came before.
func TestWebhookBackoff(t *testing.T) {
	d := Dispatch{}.withDefaults()
	for n := 1; n <= 200; n++ {
		full := min(30*time.Second*time.Duration(1<<min(n-1, 20)), time.Hour)
		for range 20 {
			if w := d.retryAfter(n); w < full/2 || w > full {
				t.Fatalf("wait after attempt %d: %s, want within [%s, %s]", n, w, full/2, full)
			}
		}
	}
}

// TestPrivateAddressInsideIPv6: an IPv4 address carried inside an IPv6 one
// is judged as itself, and the ranges that carry one for no endpoint's use
// are refused.
func TestPrivateAddressInsideIPv6(t *testing.T) {
	for addr, private := range map[string]bool{
		"64:ff9b::7f00:1":      true,  // NAT64 of 127.0.0.1
		"64:ff9b::a01:203":     true,  // NAT64 of 10.1.2.3
		"64:ff9b::a9fe:a9fe":   true,  // NAT64 of 169.254.169.254
		"64:ff9b::5db8:d70e":   false, // NAT64 of 93.184.215.14
		"2002:c0a8:101::1":     true,  // 6to4 of 192.168.1.1
		"2002:5db8:d70e::1":    false, // 6to4 of 93.184.215.14
		"64:ff9b:1::5db8:d70e": true,  // NAT64 of a network's own
		"2001:0:4136:e378::1":  true,  // Teredo
		"::7f00:1":             true,  // IPv4-compatible 127.0.0.1
		"::ffff:10.0.0.1":      true,  // IPv4-mapped
		"::ffff:0:a00:1":       true,  // IPv4-translated 10.0.0.1
		"2606:2800:220:1::248": false, // public IPv6
		"93.184.215.14":        false,
	} {
		if got := privateAddress(netip.MustParseAddr(addr)); got != private {
			t.Errorf("%s: private %v, want %v", addr, got, private)
		}
	}
}

// TestPrivateAddressRanges: the special-purpose ranges refused beside those
// net/netip names, each inside and just outside its edges, so that a range
// dropped or cut short shows. "This network" (0.0.0.0/8) matters most: on
// Linux a connection to it reaches the host itself.
func TestPrivateAddressRanges(t *testing.T) {
	for addr, private := range map[string]bool{
		"0.1.2.3":          true, // this network
		"0.255.255.255":    true,
		"1.0.0.1":          false,
		"100.64.0.0":       true, // carrier-grade NAT
		"100.127.255.255":  true,
		"100.63.255.255":   false,
		"100.128.0.0":      false,
		"192.0.0.1":        true, // IETF protocol assignments
		"192.0.2.1":        true, // documentation
		"192.0.3.1":        false,
		"198.18.0.1":       true, // benchmarking
		"198.19.255.255":   true,
		"198.17.255.255":   false,
		"198.20.0.0":       false,
		"198.51.100.7":     true, // documentation
		"203.0.113.200":    true, // documentation
		"240.0.0.1":        true, // reserved
		"255.255.255.254":  true,
		"239.255.255.255":  true, // multicast
		"100::1":           true, // discard-only
		"100:0:0:1::1":     false,
		"2001:db8:ffff::1": true, // documentation
		"2001:db9::1":      false,
		"fec0::1":          true, // site-local
		"feff::1":          true,
		"ff00::1":          true, // multicast
	} {
		if got := privateAddress(netip.MustParseAddr(addr)); got != private {
			t.Errorf("%s: private %v, want %v", addr, got, private)
		}
	}
}
