package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/pulsewire/pulsewire/control/metrics"
	"github.com/pulsewire/pulsewire/control/webhook"
	"github.com/pulsewire/pulsewire/storage"
)

// Defaults of a Dispatch.
const (
	DefaultWebhookTimeout = 10 * time.Second
	defaultWebhookPoll    = time.Second
	defaultFirstRetry     = 30 * time.Second
	defaultMaxRetry       = time.Hour
	// maxInFlight bounds the attempts one dispatcher makes at once: one
	// per endpoint, so this many endpoints are posted to in parallel.
	maxInFlight = 32
	// maxInFlightPerClient bounds the attempts of one client's deliveries
	// at once, over every instance: a client whose endpoints are slow
	// holds up its own deliveries, never those of every other client.
	maxInFlightPerClient = 4
	// DeliveryLogKept is how long a delivered or given-up delivery stays
	// in its endpoint's log; a pending one stays until it is done.
	DeliveryLogKept = 30 * 24 * time.Hour
	// maxAnswerRead bounds what is read of an endpoint's answer, which is
	// only drained so that the connection can be reused.
	maxAnswerRead = 64 << 10
)

// Dispatch configures DeliverWebhooks. The zero value is the server's.
type Dispatch struct {
	// Timeout bounds an attempt, from the connection to the answer's
	// status (DefaultWebhookTimeout when 0).
	Timeout time.Duration
	// Poll is how often the outbox is looked at for deliveries that came
	// due, beside the events of this instance, which wake the dispatcher
	// at once (every second when 0).
	Poll time.Duration
	// FirstRetry and MaxRetry shape the backoff between attempts: the
	// n-th retry waits FirstRetry·2ⁿ⁻¹, at most MaxRetry, less a random
	// part of up to half of it, so that the retries of many events do not
	// arrive together (30 s and 1 h when 0).
	FirstRetry, MaxRetry time.Duration
	// Logger receives a line per attempt that failed; nil: nothing.
	Logger *slog.Logger
}

func (d Dispatch) withDefaults() Dispatch {
	if d.Timeout <= 0 {
		d.Timeout = DefaultWebhookTimeout
	}
	if d.Poll <= 0 {
		d.Poll = defaultWebhookPoll
	}
	if d.FirstRetry <= 0 {
		d.FirstRetry = defaultFirstRetry
	}
	if d.MaxRetry <= 0 {
		d.MaxRetry = defaultMaxRetry
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	return d
}

// retryAfter is the wait before the attempt that follows the n-th (n ≥ 1).
func (d Dispatch) retryAfter(n int) time.Duration {
	wait := d.FirstRetry
	// Doubled step by step: a shift by n would overflow for long runs.
	for i := 1; i < n && wait < d.MaxRetry; i++ {
		wait *= 2
	}
	wait = min(wait, d.MaxRetry)
	return wait - rand.N(wait/2+1)
}

// wakeWebhooks tells the dispatcher that a delivery may be due now.
func (s *Service) wakeWebhooks() {
	select {
	case s.webhookWake <- struct{}{}:
	default:
	}
}

// DeliverWebhooks posts the environment's webhooks until ctx ends: it
// claims the due deliveries of the outbox (several instances on one
// database share them out), posts each to its endpoint, and records the
// attempt; every hour it forgets the deliveries done for longer than
// DeliveryLogKept. Attempts run apart from each other and from the runs, so a slow
// endpoint holds up only its own deliveries. Until ctx ends it returns
// only once the attempts in flight have ended; those it cut short are
// released, to be made again at once by whichever instance claims them.
func (s *Service) DeliverWebhooks(ctx context.Context, d Dispatch) {
	d = d.withDefaults()
	client := s.webhookClient(d.Timeout)
	defer client.CloseIdleConnections()
	// A claim outlives its attempt: another instance takes a delivery
	// over only once this one has certainly given up on it.
	lease := d.Timeout + time.Minute
	log := d.Logger.With("env", string(s.env))
	tick := time.NewTicker(d.Poll)
	defer tick.Stop()
	forget := time.NewTicker(time.Hour)
	defer forget.Stop()
	s.forgetDeliveries(ctx, log)
	var (
		running  sync.WaitGroup
		slots    = make(chan struct{}, maxInFlight)
		claimErr bool // the last claim failed: logged once, not every poll
	)
	for {
		if free := maxInFlight - len(slots); free > 0 {
			due, err := s.db.ClaimWebhooks(ctx, free, maxInFlightPerClient, lease)
			switch {
			case err != nil && ctx.Err() == nil && !claimErr:
				log.Error("webhooks: claiming due deliveries (logged once until a claim works again)", "err", err)
			case err == nil && claimErr:
				log.Info("webhooks: claiming due deliveries works again")
			}
			claimErr = err != nil
			for _, w := range due {
				slots <- struct{}{}
				running.Go(func() {
					defer func() { <-slots; s.wakeWebhooks() }()
					s.attempt(ctx, client, d, log, w)
				})
			}
		}
		select {
		case <-ctx.Done():
			running.Wait()
			release, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			if err := s.db.ReleaseWebhooks(release); err != nil {
				log.Error("webhooks: releasing the deliveries cut short", "err", err)
			}
			return
		case <-tick.C:
		case <-s.webhookWake:
		case <-forget.C:
			s.forgetDeliveries(ctx, log)
		}
	}
}

// forgetDeliveries removes from the delivery logs what is done and older
// than DeliveryLogKept.
func (s *Service) forgetDeliveries(ctx context.Context, log *slog.Logger) {
	if _, err := s.db.ForgetWebhookDeliveries(ctx, s.db.Now().Add(-DeliveryLogKept)); err != nil && ctx.Err() == nil {
		log.Error("webhooks: forgetting old deliveries", "err", err)
	}
}

// attempt posts a claimed delivery once and records how it went.
func (s *Service) attempt(ctx context.Context, client *http.Client, d Dispatch, log *slog.Logger, w storage.DueWebhook) {
	a := s.post(ctx, client, w)
	if ctx.Err() != nil {
		return // stopping: released, and made again
	}
	if !a.Delivered {
		a.Next = s.db.Now().Add(d.retryAfter(w.Attempts + 1))
	}
	outcome, err := s.db.RecordWebhookAttempt(ctx, w.ID, a)
	switch {
	case errors.Is(err, storage.ErrNotFound): // its endpoint was deleted meanwhile
		return
	case err != nil:
		log.Error("webhooks: recording an attempt", "delivery", w.ID, "err", err)
		return
	}
	counted := map[string]metrics.WebhookOutcome{
		storage.DeliveryDelivered: metrics.WebhookDelivered,
		storage.DeliveryPending:   metrics.WebhookRetrying,
		storage.DeliveryFailed:    metrics.WebhookFailed,
	}[outcome]
	s.metrics.WebhookAttempt(string(s.env), counted)
	if !a.Delivered {
		// The delivery and endpoint ids only: the URL may hold a token.
		log.Info("webhooks: attempt failed", "endpoint", w.Endpoint, "delivery", w.ID, "status", a.Status, "error", a.Error, "outcome", outcome)
	}
}

// post makes one attempt at w: a POST of its event, signed now.
func (s *Service) post(ctx context.Context, client *http.Client, w storage.DueWebhook) storage.WebhookAttempt {
	body := webhookPayload(s.env, w.Event)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return storage.WebhookAttempt{Error: "the URL cannot be requested"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "PulseWire-Webhooks/1")
	req.Header.Set(webhook.EventIDHeader, w.Event.ID)
	req.Header.Set(webhook.SignatureHeader, webhook.Signature(w.Secret, time.Now(), body))
	resp, err := client.Do(req)
	if err != nil {
		return storage.WebhookAttempt{Error: describeFailure(err, client.Timeout)}
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswerRead))
	resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return storage.WebhookAttempt{Status: resp.StatusCode, Delivered: true}
	}
	return storage.WebhookAttempt{Status: resp.StatusCode, Error: fmt.Sprintf("answered %d", resp.StatusCode)}
}

// describeFailure says, for the delivery log, why a request got no answer,
// in a few fixed words: the error itself may name addresses of the
// server's network.
func describeFailure(err error, timeout time.Duration) string {
	var ne net.Error
	switch {
	case errors.Is(err, errPrivateAddress):
		return "refused: " + errPrivateAddress.Error()
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Sprintf("no answer within %s", timeout)
	default:
		return "the connection failed"
	}
}

// webhookClient is the HTTP client of the deliveries. It connects only to
// addresses the address rule allows, checked on the address it connects
// to, after the host is resolved: a host that resolves to a public address
// at registration and to a private one later (DNS rebinding) is refused
// all the same. It uses no proxy and follows no redirect (a 3xx is an
// answer that is not 2xx).
func (s *Service) webhookClient(timeout time.Duration) *http.Client {
	dialer := &net.Dialer{
		Timeout: timeout,
		Control: func(_, address string, _ syscall.RawConn) error {
			if s.allowPrivateWebhooks {
				return nil
			}
			ap, err := netip.ParseAddrPort(address)
			if err != nil || privateAddress(ap.Addr()) {
				return errPrivateAddress
			}
			return nil
		},
	}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			DialContext:         dialer.DialContext,
			ForceAttemptHTTP2:   true,
			MaxIdleConnsPerHost: 2,
			IdleConnTimeout:     90 * time.Second,
			TLSHandshakeTimeout: timeout,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// WebhookPayload is the body of a webhook: what happened, to which
// measure, in which environment. It holds no person data and no variable:
// a backend reads the measure with its API key.
type WebhookPayload struct {
	ID          string         `json:"id"` // the event's: one per event, on every attempt
	Type        string         `json:"type"`
	CreatedAt   string         `json:"createdAt"`
	Environment string         `json:"environment"`
	Measure     WebhookMeasure `json:"measure"`
}

// WebhookMeasure is the measure a webhook is about.
type WebhookMeasure struct {
	ID     string  `json:"id"`
	Status string  `json:"status"`
	Kind   *string `json:"kind"` // null: the measure never ran to a kind
}

// webhookPayload is the body of event: the same bytes on every attempt.
func webhookPayload(env Env, e storage.WebhookEvent) []byte {
	p := WebhookPayload{
		ID: e.ID, Type: e.Type, CreatedAt: formatTime(e.CreatedAt), Environment: string(env),
		Measure: WebhookMeasure{ID: e.MeasureID, Status: string(e.MeasureStatus)},
	}
	if e.MeasureKind != "" {
		kind := string(e.MeasureKind)
		p.Measure.Kind = &kind
	}
	body, _ := json.Marshal(p)
	return body
}
