package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Client is a company account of one environment.
type Client struct {
	key            int64 // internal row key; every owned row refers to it
	ID             string
	Name           string
	Variables      []string // the variables the account is entitled to
	MonthlyCredits *int64   // nil: unlimited
	Active         bool
	CreatedAt      time.Time
}

// NewClient is what CreateClient stores.
type NewClient struct {
	Name           string
	APIKeyHash     []byte // SHA-256 of the API key; the key itself is never stored
	Variables      []string
	MonthlyCredits *int64
}

// ClientUpdate changes a client; nil fields stay as they are.
type ClientUpdate struct {
	Variables []string
	// MonthlyCredits, when not nil, replaces the monthly credits: a nil
	// *int64 inside means unlimited.
	MonthlyCredits **int64
}

const clientColumns = `key, id, name, variables, monthly_credits, active, created_at`

func scanClient(row interface{ Scan(...any) error }) (Client, error) {
	var (
		c         Client
		variables string
		credits   sql.NullInt64
		createdAt int64
	)
	if err := row.Scan(&c.key, &c.ID, &c.Name, &variables, &credits, &c.Active, &createdAt); err != nil {
		return Client{}, err
	}
	if err := json.Unmarshal([]byte(variables), &c.Variables); err != nil {
		return Client{}, fmt.Errorf("client %s variables: %w", c.ID, err)
	}
	if credits.Valid {
		c.MonthlyCredits = &credits.Int64
	}
	c.CreatedAt = fromMillis(createdAt)
	return c, nil
}

// CreateClient stores a new active client.
func (db *DB) CreateClient(ctx context.Context, n NewClient) (Client, error) {
	variables, err := json.Marshal(nonNil(n.Variables))
	if err != nil {
		return Client{}, err
	}
	c := Client{
		ID:             uuid.NewString(),
		Name:           n.Name,
		Variables:      nonNil(n.Variables),
		MonthlyCredits: n.MonthlyCredits,
		Active:         true,
		CreatedAt:      db.stamp(),
	}
	err = db.writer().QueryRow(ctx,
		`INSERT INTO clients (id, name, api_key_hash, variables, monthly_credits, active, created_at)
		 VALUES (?, ?, ?, ?, ?, TRUE, ?) RETURNING key`,
		c.ID, c.Name, n.APIKeyHash, string(variables), nullInt(c.MonthlyCredits), millis(c.CreatedAt)).Scan(&c.key)
	if err != nil {
		return Client{}, fmt.Errorf("create client: %w", err)
	}
	return c, nil
}

// ClientByKeyHash returns the client whose API key hashes to hash, active or
// not: the caller decides what a deactivated client may do. It reads the
// database every time, so a deactivation by another process is seen by the
// very next call.
func (db *DB) ClientByKeyHash(ctx context.Context, hash []byte) (Client, error) {
	return findClient(ctx, db.reader(), "api_key_hash", hash)
}

// ClientByID returns client id, active or not.
func (db *DB) ClientByID(ctx context.Context, id string) (Client, error) {
	return findClient(ctx, db.reader(), "id", id)
}

// findClient reads the client whose column equals value.
func findClient(ctx context.Context, q dbtx, column string, value any) (Client, error) {
	c, err := scanClient(q.QueryRow(ctx, `SELECT `+clientColumns+` FROM clients WHERE `+column+` = ?`, value))
	if errors.Is(err, sql.ErrNoRows) {
		return Client{}, ErrNotFound
	}
	if err != nil {
		return Client{}, fmt.Errorf("find client: %w", err)
	}
	return c, nil
}

// Clients lists every client, oldest first.
func (db *DB) Clients(ctx context.Context) ([]Client, error) {
	rows, err := db.reader().Query(ctx, `SELECT `+clientColumns+` FROM clients ORDER BY key`)
	if err != nil {
		return nil, fmt.Errorf("list clients: %w", err)
	}
	defer rows.Close()
	clients := []Client{}
	for rows.Next() {
		c, err := scanClient(rows)
		if err != nil {
			return nil, fmt.Errorf("list clients: %w", err)
		}
		clients = append(clients, c)
	}
	return clients, rows.Err()
}

// UpdateClient changes a client's entitlements and returns it as stored.
func (db *DB) UpdateClient(ctx context.Context, id string, u ClientUpdate) (Client, error) {
	err := db.inWrite(ctx, func(tx dbtx) error {
		if u.Variables != nil {
			variables, err := json.Marshal(u.Variables)
			if err != nil {
				return err
			}
			if err := expectOne(tx.Exec(ctx, `UPDATE clients SET variables = ? WHERE id = ?`, string(variables), id)); err != nil {
				return err
			}
		}
		if u.MonthlyCredits != nil {
			if err := expectOne(tx.Exec(ctx, `UPDATE clients SET monthly_credits = ? WHERE id = ?`, nullInt(*u.MonthlyCredits), id)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Client{}, fmt.Errorf("update client %s: %w", id, err)
	}
	// Read through the write pool: the answer includes the write just made.
	return findClient(ctx, db.writer(), "id", id)
}

// DeactivateClient turns a client off for good: its API key and every one of
// its access tokens stop working at once, and its webhook deliveries still
// pending are given up (nothing more is posted to a client that is gone).
// Deactivating twice is no error.
func (db *DB) DeactivateClient(ctx context.Context, id string) (Client, error) {
	now := millis(db.stamp())
	err := db.inWrite(ctx, func(tx dbtx) error {
		if err := expectOne(tx.Exec(ctx,
			`UPDATE clients SET active = FALSE, deactivated_at = coalesce(deactivated_at, ?) WHERE id = ?`, now, id)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx,
			`UPDATE webhook_deliveries SET outcome = 'failed', next_at = NULL, leased_by = NULL, leased_until = NULL,
			   last_error = ?
			 WHERE outcome = 'pending' AND endpoint IN (
			   SELECT e.key FROM webhook_endpoints e JOIN clients c ON c.key = e.client WHERE c.id = ?)`,
			errClientDeactivated, id)
		return err
	})
	if err != nil {
		return Client{}, fmt.Errorf("deactivate client %s: %w", id, err)
	}
	// Read through the write pool: the answer includes the write just made.
	return findClient(ctx, db.writer(), "id", id)
}

// errClientDeactivated is the last error of the deliveries a deactivation
// gave up.
const errClientDeactivated = "given up: the client was deactivated"

// expectOne turns an UPDATE or DELETE that touched no row into ErrNotFound.
func expectOne(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

func nullInt(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
