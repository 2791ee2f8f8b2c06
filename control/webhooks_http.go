package control

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/pulsewire/pulsewire/storage"
)

// webhookRoutes serves the webhook endpoints of the calling client and
// their delivery logs.
func (a *API) webhookRoutes(api *gin.RouterGroup) {
	api.POST("/webhook-endpoints", a.handle(a.createWebhookEndpoint))
	api.GET("/webhook-endpoints", a.handle(a.listWebhookEndpoints))
	api.GET("/webhook-endpoints/:id", a.handle(a.getWebhookEndpoint))
	api.DELETE("/webhook-endpoints/:id", a.handle(a.deleteWebhookEndpoint))
	api.GET("/webhook-endpoints/:id/deliveries", a.handle(a.listWebhookDeliveries))
	api.POST("/webhook-endpoints/:id/deliveries/:deliveryId/redeliver", a.handle(a.redeliverWebhook))
}

// createWebhookEndpoint: POST /webhook-endpoints, 201 with the endpoint and
// its secret, shown this once.
func (a *API) createWebhookEndpoint(c *gin.Context, client storage.Client) error {
	body, err := readBody(c, maxJSONBody)
	if err != nil {
		return err
	}
	n, err := ParseWebhookEndpoint(body)
	if err != nil {
		return err
	}
	w, err := a.svc.CreateWebhookEndpoint(c.Request.Context(), client, n)
	if err != nil {
		return err
	}
	v := NewWebhookEndpointView(w)
	v.Secret = &w.Secret
	c.JSON(http.StatusCreated, v)
	return nil
}

// listWebhookEndpoints: GET /webhook-endpoints, oldest first.
func (a *API) listWebhookEndpoints(c *gin.Context, client storage.Client) error {
	ws, err := a.svc.WebhookEndpoints(c.Request.Context(), client)
	if err != nil {
		return err
	}
	views := make([]WebhookEndpointView, len(ws))
	for i, w := range ws {
		views[i] = NewWebhookEndpointView(w)
	}
	c.JSON(http.StatusOK, views)
	return nil
}

// getWebhookEndpoint: GET /webhook-endpoints/{id}, without its secret.
func (a *API) getWebhookEndpoint(c *gin.Context, client storage.Client) error {
	w, err := a.svc.WebhookEndpoint(c.Request.Context(), client, c.Param("id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, NewWebhookEndpointView(w))
	return nil
}

// deleteWebhookEndpoint: DELETE /webhook-endpoints/{id}, 200 with an empty
// body.
func (a *API) deleteWebhookEndpoint(c *gin.Context, client storage.Client) error {
	if err := a.svc.DeleteWebhookEndpoint(c.Request.Context(), client, c.Param("id")); err != nil {
		return err
	}
	c.Status(http.StatusOK)
	return nil
}

// listWebhookDeliveries: GET /webhook-endpoints/{id}/deliveries, newest
// first.
func (a *API) listWebhookDeliveries(c *gin.Context, client storage.Client) error {
	ds, err := a.svc.WebhookDeliveries(c.Request.Context(), client, c.Param("id"))
	if err != nil {
		return err
	}
	views := make([]WebhookDeliveryView, len(ds))
	for i, d := range ds {
		views[i] = NewWebhookDeliveryView(d)
	}
	c.JSON(http.StatusOK, views)
	return nil
}

// redeliverWebhook: POST /webhook-endpoints/{id}/deliveries/{deliveryId}/redeliver,
// 200 with the delivery, due now.
func (a *API) redeliverWebhook(c *gin.Context, client storage.Client) error {
	d, err := a.svc.RedeliverWebhook(c.Request.Context(), client, c.Param("id"), c.Param("deliveryId"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, NewWebhookDeliveryView(d))
	return nil
}

// WebhookEndpointView is an endpoint as the API shows it. Secret is set in
// the answer that creates it only.
type WebhookEndpointView struct {
	ID        string   `json:"id"`
	URL       string   `json:"url"`
	Events    []string `json:"events"`
	Secret    *string  `json:"secret,omitempty"`
	CreatedAt string   `json:"createdAt"`
}

// NewWebhookEndpointView shows w without its secret.
func NewWebhookEndpointView(w storage.WebhookEndpoint) WebhookEndpointView {
	return WebhookEndpointView{ID: w.ID, URL: w.URL, Events: w.Events, CreatedAt: formatTime(w.CreatedAt)}
}

// WebhookDeliveryView is a delivery of the log.
type WebhookDeliveryView struct {
	ID            string  `json:"id"`
	EventID       string  `json:"eventId"`
	Event         string  `json:"event"`
	MeasureID     string  `json:"measureId"`
	CreatedAt     string  `json:"createdAt"` // the event's time
	Outcome       string  `json:"outcome"`   // pending, delivered or failed
	Attempts      int     `json:"attempts"`
	LastAttemptAt *string `json:"lastAttemptAt"`
	LastStatus    *int    `json:"lastStatus"` // null: no answer (lastError says why) or no attempt yet
	LastError     *string `json:"lastError"`
	NextAttemptAt *string `json:"nextAttemptAt"` // null unless pending
	GiveUpAt      string  `json:"giveUpAt"`
}

// NewWebhookDeliveryView shows d.
func NewWebhookDeliveryView(d storage.WebhookDelivery) WebhookDeliveryView {
	v := WebhookDeliveryView{
		ID: d.ID, EventID: d.Event.ID, Event: d.Event.Type, MeasureID: d.Event.MeasureID,
		CreatedAt: formatTime(d.Event.CreatedAt), Outcome: d.Outcome, Attempts: d.Attempts, GiveUpAt: formatTime(d.GiveUpAt),
	}
	v.LastAttemptAt, v.NextAttemptAt = optionalTime(d.LastAttemptAt), optionalTime(d.NextAttemptAt)
	if d.LastStatus != 0 {
		v.LastStatus = &d.LastStatus
	}
	if d.LastError != "" {
		v.LastError = &d.LastError
	}
	return v
}

// optionalTime is t in the API's form, or nil (null) when t is zero.
func optionalTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := formatTime(t)
	return &s
}
