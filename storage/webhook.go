package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Webhooks: a client registers endpoints, and every event of its measures
// is written, in the transaction that makes it happen, as one pending
// delivery per endpoint that wants it (the outbox). A dispatcher claims the
// due deliveries, posts them, and records each attempt. A crash between the
// event and its delivery loses nothing: the delivery is still pending, and
// a claim whose instance died expires.

// The events a webhook endpoint may want.
const (
	EventMeasureEnded   = "measure.ended"
	EventMeasureDeleted = "measure.deleted"
)

// WebhookRetryWindow is how long a delivery is tried, from its event (or
// its redelivery), before it is given up.
const WebhookRetryWindow = 24 * time.Hour

// ErrWebhookLimit: the client already has as many endpoints as allowed.
var ErrWebhookLimit = errors.New("storage: webhook endpoint limit reached")

// WebhookEndpoint is a URL a client's events are posted to.
type WebhookEndpoint struct {
	ID        string
	URL       string
	Events    []string
	Secret    string // signs the deliveries
	CreatedAt time.Time
}

// Wants reports whether the endpoint wants events of type event.
func (w WebhookEndpoint) Wants(event string) bool {
	return slices.Contains(w.Events, event)
}

const webhookEndpointColumns = `id, url, events, secret, created_at`

func scanWebhookEndpoint(row interface{ Scan(...any) error }) (WebhookEndpoint, error) {
	var (
		w         WebhookEndpoint
		events    string
		createdAt int64
	)
	if err := row.Scan(&w.ID, &w.URL, &events, &w.Secret, &createdAt); err != nil {
		return WebhookEndpoint{}, err
	}
	if err := json.Unmarshal([]byte(events), &w.Events); err != nil {
		return WebhookEndpoint{}, fmt.Errorf("webhook endpoint %s events: %w", w.ID, err)
	}
	w.CreatedAt = fromMillis(createdAt)
	return w, nil
}

// CreateWebhookEndpoint stores a new endpoint of c, unless c already has
// max of them (ErrWebhookLimit). The count is decided under the client's
// lock, so concurrent creations never pass the limit together.
func (db *DB) CreateWebhookEndpoint(ctx context.Context, c Client, url string, events []string, secret string, max int) (WebhookEndpoint, error) {
	w := WebhookEndpoint{ID: uuid.NewString(), URL: url, Events: events, Secret: secret, CreatedAt: db.stamp()}
	err := db.inWrite(ctx, func(tx dbtx) error {
		if err := lockClient(ctx, tx, c.key); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM webhook_endpoints WHERE client = ?`, c.key).Scan(&n); err != nil {
			return err
		}
		if n >= max {
			return ErrWebhookLimit
		}
		_, err := tx.Exec(ctx, `INSERT INTO webhook_endpoints (id, client, url, events, secret, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			w.ID, c.key, w.URL, jsonOrNull(nonNil(w.Events)), w.Secret, millis(w.CreatedAt))
		return err
	})
	if err != nil && !errors.Is(err, ErrWebhookLimit) {
		return WebhookEndpoint{}, fmt.Errorf("create webhook endpoint: %w", err)
	}
	return w, err
}

// WebhookEndpoints lists c's endpoints, oldest first.
func (db *DB) WebhookEndpoints(ctx context.Context, c Client) ([]WebhookEndpoint, error) {
	rows, err := db.reader().Query(ctx,
		`SELECT `+webhookEndpointColumns+` FROM webhook_endpoints WHERE client = ? ORDER BY created_at, key`, c.key)
	if err != nil {
		return nil, fmt.Errorf("webhook endpoints: %w", err)
	}
	defer rows.Close()
	ws := []WebhookEndpoint{}
	for rows.Next() {
		w, err := scanWebhookEndpoint(rows)
		if err != nil {
			return nil, fmt.Errorf("webhook endpoints: %w", err)
		}
		ws = append(ws, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("webhook endpoints: %w", err)
	}
	return ws, nil
}

// WebhookEndpoint returns c's endpoint id; another client's is ErrNotFound.
func (db *DB) WebhookEndpoint(ctx context.Context, c Client, id string) (WebhookEndpoint, error) {
	w, err := scanWebhookEndpoint(db.reader().QueryRow(ctx,
		`SELECT `+webhookEndpointColumns+` FROM webhook_endpoints WHERE id = ? AND client = ?`, id, c.key))
	if errors.Is(err, sql.ErrNoRows) {
		return WebhookEndpoint{}, ErrNotFound
	}
	if err != nil {
		return WebhookEndpoint{}, fmt.Errorf("webhook endpoint %s: %w", id, err)
	}
	return w, nil
}

// DeleteWebhookEndpoint removes c's endpoint id and its deliveries, pending
// ones included: they are not sent.
func (db *DB) DeleteWebhookEndpoint(ctx context.Context, c Client, id string) error {
	err := expectOne(db.writer().Exec(ctx, `DELETE FROM webhook_endpoints WHERE id = ? AND client = ?`, id, c.key))
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("delete webhook endpoint %s: %w", id, err)
	}
	return err
}

// WebhookEvent is what happened to a measure, as a webhook tells it: ids,
// status and kind, nothing of the person or the variables.
type WebhookEvent struct {
	ID            string // the same for every endpoint it goes to
	Type          string
	CreatedAt     time.Time
	MeasureID     string
	MeasureStatus Status
	MeasureKind   Kind // empty: none
}

// enqueueWebhooks writes, in tx, a pending delivery of an event of type
// event about measure m to each endpoint of the client with key client
// that wants it, unless the client was deactivated (a measure the sweep
// ends after that).
func enqueueWebhooks(ctx context.Context, tx dbtx, client int64, event string, m Measure, at time.Time) error {
	rows, err := tx.Query(ctx, `SELECT e.key, e.events FROM webhook_endpoints e JOIN clients c ON c.key = e.client
		WHERE e.client = ? AND c.active`, client)
	if err != nil {
		return err
	}
	var endpoints []int64
	for rows.Next() {
		var (
			key    int64
			events string
		)
		if err := rows.Scan(&key, &events); err != nil {
			rows.Close()
			return err
		}
		var names []string
		if err := json.Unmarshal([]byte(events), &names); err != nil {
			rows.Close()
			return err
		}
		if (WebhookEndpoint{Events: names}).Wants(event) {
			endpoints = append(endpoints, key)
		}
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := rows.Err(); err != nil {
		return err
	}
	eventID := uuid.NewString()
	for _, key := range endpoints {
		_, err := tx.Exec(ctx,
			`INSERT INTO webhook_deliveries (id, endpoint, event_id, event_type, event_at, measure_id, measure_status, measure_kind,
			   outcome, next_at, give_up_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)`,
			uuid.NewString(), key, eventID, event, millis(at), m.ID, string(m.Status), nullIfEmpty(string(m.Kind)),
			millis(at), millis(at.Add(WebhookRetryWindow)))
		if err != nil {
			return err
		}
	}
	return nil
}

// The outcomes of a delivery.
const (
	DeliveryPending   = "pending"   // not answered with 2xx yet; tried again at NextAttemptAt
	DeliveryDelivered = "delivered" // the endpoint answered 2xx
	DeliveryFailed    = "failed"    // given up: no 2xx within the retry window
)

// WebhookDelivery is one event's delivery to one endpoint, with the last
// of its attempts.
type WebhookDelivery struct {
	ID       string
	Endpoint string // the endpoint's id
	Event    WebhookEvent
	Outcome  string
	Attempts int
	// LastAttemptAt is zero before the first attempt; LastStatus is the
	// HTTP status of the last answer (0: none, LastError says why).
	LastAttemptAt time.Time
	LastStatus    int
	LastError     string
	// NextAttemptAt is when a pending delivery is due; zero once it is
	// delivered or failed.
	NextAttemptAt time.Time
	GiveUpAt      time.Time
}

const webhookDeliveryColumns = `d.id, e.id, d.event_id, d.event_type, d.event_at, d.measure_id, d.measure_status, d.measure_kind,
	d.outcome, d.attempts, d.last_attempt_at, d.last_status, d.last_error, d.next_at, d.give_up_at`

func scanWebhookDelivery(row interface{ Scan(...any) error }) (WebhookDelivery, error) {
	var (
		d                  WebhookDelivery
		eventAt, giveUpAt  int64
		kind, lastError    sql.NullString
		lastAt, nextAt     sql.NullInt64
		lastStatus         sql.NullInt64
		measureStatus, typ string
	)
	err := row.Scan(&d.ID, &d.Endpoint, &d.Event.ID, &typ, &eventAt, &d.Event.MeasureID, &measureStatus, &kind,
		&d.Outcome, &d.Attempts, &lastAt, &lastStatus, &lastError, &nextAt, &giveUpAt)
	if err != nil {
		return WebhookDelivery{}, err
	}
	d.Event.Type, d.Event.CreatedAt = typ, fromMillis(eventAt)
	d.Event.MeasureStatus, d.Event.MeasureKind = Status(measureStatus), Kind(kind.String)
	if lastAt.Valid {
		d.LastAttemptAt = fromMillis(lastAt.Int64)
	}
	if nextAt.Valid && d.Outcome == DeliveryPending {
		d.NextAttemptAt = fromMillis(nextAt.Int64)
	}
	d.LastStatus, d.LastError, d.GiveUpAt = int(lastStatus.Int64), lastError.String, fromMillis(giveUpAt)
	return d, nil
}

// MaxDeliveriesListed bounds the delivery log: its most recent deliveries.
const MaxDeliveriesListed = 100

// WebhookDeliveries returns the most recent deliveries (at most
// MaxDeliveriesListed) of c's endpoint id, newest first; ErrNotFound when
// c has no such endpoint.
func (db *DB) WebhookDeliveries(ctx context.Context, c Client, endpoint string) ([]WebhookDelivery, error) {
	var ds []WebhookDelivery
	err := db.inRead(ctx, func(tx dbtx) error {
		ds = []WebhookDelivery{}
		var key int64
		err := tx.QueryRow(ctx, `SELECT key FROM webhook_endpoints WHERE id = ? AND client = ?`, endpoint, c.key).Scan(&key)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+webhookDeliveryColumns+`
			FROM webhook_deliveries d JOIN webhook_endpoints e ON e.key = d.endpoint
			WHERE d.endpoint = ? ORDER BY d.event_at DESC, d.id LIMIT ?`, key, MaxDeliveriesListed)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			d, err := scanWebhookDelivery(rows)
			if err != nil {
				return err
			}
			ds = append(ds, d)
		}
		return rows.Err()
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("webhook deliveries: %w", err)
	}
	return ds, err
}

// RedeliverWebhook makes delivery id of c's endpoint due now, whatever its
// outcome, with a new retry window; ErrNotFound when c has no such
// delivery. A delivery being attempted now keeps its attempt.
func (db *DB) RedeliverWebhook(ctx context.Context, c Client, endpoint, id string) (WebhookDelivery, error) {
	now := db.stamp()
	var d WebhookDelivery
	err := db.inWrite(ctx, func(tx dbtx) error {
		err := expectOne(tx.Exec(ctx,
			`UPDATE webhook_deliveries SET outcome = 'pending', next_at = ?, give_up_at = ?
			 WHERE id = ? AND endpoint = (SELECT key FROM webhook_endpoints WHERE id = ? AND client = ?)`,
			millis(now), millis(now.Add(WebhookRetryWindow)), id, endpoint, c.key))
		if err != nil {
			return err
		}
		d, err = scanWebhookDelivery(tx.QueryRow(ctx, `SELECT `+webhookDeliveryColumns+`
			FROM webhook_deliveries d JOIN webhook_endpoints e ON e.key = d.endpoint WHERE d.id = ?`, id))
		return err
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return WebhookDelivery{}, fmt.Errorf("redeliver webhook %s: %w", id, err)
	}
	return d, err
}

// DueWebhook is a delivery claimed for an attempt, with what it is posted
// to and signed with.
type DueWebhook struct {
	WebhookDelivery
	URL, Secret string
}

// ClaimWebhooks claims up to n due deliveries for this DB's instance until
// lease has passed, and returns them. A delivery is due when it is pending,
// its next attempt has come, no claim holds it or another delivery of its
// endpoint, and it is its endpoint's oldest due one: one delivery per
// endpoint at a time, so that an endpoint slow to answer holds up only its
// own deliveries; and at most perClient deliveries of one client at a time,
// counted over every instance, so that the slow endpoints of some clients
// cannot take every attempt a dispatcher makes at once. A claim serves
// the clients in turn: each one's oldest due delivery before any one's
// second. Instances that claim at once get different deliveries: a claim
// takes only rows that are still unclaimed when it writes them.
func (db *DB) ClaimWebhooks(ctx context.Context, n, perClient int, lease time.Duration) ([]DueWebhook, error) {
	now := millis(db.now())
	// A look on the read pool first: an idle dispatcher, which looks
	// every second, never takes the writer.
	var found bool
	err := db.reader().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM webhook_deliveries d
		WHERE d.outcome = 'pending' AND d.next_at <= ? AND (d.leased_until IS NULL OR d.leased_until <= ?)`+ofActiveClient+`)`,
		now, now).Scan(&found)
	if err != nil || !found {
		if err != nil {
			err = fmt.Errorf("claim webhooks: %w", err)
		}
		return nil, err
	}
	var due []DueWebhook
	err = db.inWrite(ctx, func(tx dbtx) error {
		due = nil
		// The due deliveries ranked within their client (place), beside
		// what the client has in flight (busy): a client takes at most
		// perClient, and every client's first before any client's second.
		rows, err := tx.Query(ctx,
			`UPDATE webhook_deliveries SET leased_by = ?, leased_until = ?
			 WHERE id IN (
			   SELECT d.id FROM webhook_deliveries d WHERE d.id IN (
			     SELECT c.id FROM (
			       SELECT d.id, d.next_at, COALESCE(busy.n, 0) AS busy,
			         ROW_NUMBER() OVER (PARTITION BY e.client ORDER BY d.next_at, d.id) AS place
			       FROM webhook_deliveries d JOIN webhook_endpoints e ON e.key = d.endpoint
			       LEFT JOIN (SELECT be.client, COUNT(*) AS n
			         FROM webhook_deliveries b JOIN webhook_endpoints be ON be.key = b.endpoint
			         WHERE b.outcome = 'pending' AND b.leased_until > ? GROUP BY be.client) busy ON busy.client = e.client
			       WHERE d.outcome = 'pending' AND d.next_at <= ? AND (d.leased_until IS NULL OR d.leased_until <= ?)`+ofActiveClient+`
			         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries b WHERE b.endpoint = d.endpoint AND b.leased_until > ?)
			         AND d.id = (SELECT f.id FROM webhook_deliveries f WHERE f.endpoint = d.endpoint AND f.outcome = 'pending'
			           AND f.next_at <= ? ORDER BY f.next_at, f.id LIMIT 1)
			     ) c WHERE c.busy + c.place <= ?
			     ORDER BY c.place, c.next_at LIMIT ?)`+tx.e.skipLocked+`)
			 AND outcome = 'pending' AND next_at <= ? AND (leased_until IS NULL OR leased_until <= ?)
			 RETURNING id`,
			db.instance, now+lease.Milliseconds(), now, now, now, now, now, perClient, n, now, now)
		if err != nil {
			return err
		}
		ids, err := scanStrings(rows)
		if err != nil || len(ids) == 0 {
			return err
		}
		rows, err = tx.Query(ctx, `SELECT e.url, e.secret, `+webhookDeliveryColumns+`
			FROM webhook_deliveries d JOIN webhook_endpoints e ON e.key = d.endpoint
			WHERE d.id IN (?`+strings.Repeat(", ?", len(ids)-1)+`) ORDER BY d.next_at, d.id`, anys(ids)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var w DueWebhook
			if w.WebhookDelivery, err = scanWebhookDelivery(scanAfter{rows, []any{&w.URL, &w.Secret}}); err != nil {
				return err
			}
			due = append(due, w)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("claim webhooks: %w", err)
	}
	return due, nil
}

// ofActiveClient limits deliveries d to those of active clients. A
// deactivation gives up the client's pending deliveries, but on PostgreSQL
// an event written at that moment can still commit after it: such a
// delivery is never claimed.
const ofActiveClient = `
	AND EXISTS (SELECT 1 FROM webhook_endpoints ae JOIN clients ac ON ac.key = ae.client WHERE ae.key = d.endpoint AND ac.active)`

// anys is ss as arguments of a query.
func anys(ss []string) []any {
	a := make([]any, len(ss))
	for i, s := range ss {
		a[i] = s
	}
	return a
}

// WebhookAttempt is how an attempt at a delivery went.
type WebhookAttempt struct {
	Status    int    // the HTTP status answered; 0: none
	Error     string // why there was no 2xx answer, for the delivery log; empty when delivered
	Delivered bool
	// Next is when to try again; zero, or past the delivery's retry
	// window, gives the delivery up.
	Next time.Time
}

// RecordWebhookAttempt records an attempt at delivery id, claimed by this
// DB's instance, and releases the claim; it returns the delivery's outcome.
// A delivery no longer claimed by this instance (its endpoint deleted, or
// its claim expired and taken by another instance) is ErrNotFound.
func (db *DB) RecordWebhookAttempt(ctx context.Context, id string, a WebhookAttempt) (string, error) {
	now := db.stamp()
	outcome := DeliveryPending
	var next any
	switch {
	case a.Delivered:
		outcome = DeliveryDelivered
	case a.Next.IsZero():
		outcome = DeliveryFailed
	default:
		next = millis(a.Next)
	}
	var got string
	err := db.inWrite(ctx, func(tx dbtx) error {
		// Past the window, the CASE gives the delivery up.
		err := tx.QueryRow(ctx,
			`UPDATE webhook_deliveries SET attempts = attempts + 1, last_attempt_at = ?, last_status = ?, last_error = ?,
			   outcome = CASE WHEN ? = 'pending' AND ? > give_up_at THEN 'failed' ELSE ? END,
			   next_at = ?, leased_by = NULL, leased_until = NULL
			 WHERE id = ? AND leased_by = ? RETURNING outcome`,
			millis(now), nullInt64(int64(a.Status)), nullIfEmpty(a.Error), outcome, next, outcome, next, id, db.instance).Scan(&got)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		return err
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return "", fmt.Errorf("record webhook attempt %s: %w", id, err)
	}
	return got, err
}

// ReleaseWebhooks gives up this DB's instance's claims without an attempt,
// so that the deliveries are due again at once: what a dispatcher that
// stops does with the attempts it cut short.
func (db *DB) ReleaseWebhooks(ctx context.Context) error {
	_, err := db.writer().Exec(ctx,
		`UPDATE webhook_deliveries SET leased_by = NULL, leased_until = NULL WHERE leased_by = ?`, db.instance)
	if err != nil {
		return fmt.Errorf("release webhooks: %w", err)
	}
	return nil
}

// ForgetWebhookDeliveries removes the deliveries delivered or given up
// whose event happened before before, and returns how many: the delivery
// log keeps a bounded past. Pending deliveries stay, however old.
func (db *DB) ForgetWebhookDeliveries(ctx context.Context, before time.Time) (int64, error) {
	res, err := db.writer().Exec(ctx, `DELETE FROM webhook_deliveries WHERE outcome <> 'pending' AND event_at < ?`, millis(before))
	if err != nil {
		return 0, fmt.Errorf("forget webhook deliveries: %w", err)
	}
	return res.RowsAffected()
}

// nullInt64 is n, or NULL for 0.
func nullInt64(n int64) any {
	if n == 0 {
		return nil
	}
	return n
}
