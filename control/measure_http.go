package control

import (
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"
	"github.com/pulsewire/pulsewire/storage"
)

// createMeasure: POST /measures, a measure not run (201, status created).
func (a *API) createMeasure(c *gin.Context, client storage.Client) error {
	body, err := readBody(c, maxJSONBody)
	if err != nil {
		return err
	}
	in, err := ParseMeasureInput(body, a.svc.Now())
	if err != nil {
		return err
	}
	m, err := a.svc.CreateMeasure(c.Request.Context(), client, in)
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, NewMeasureView(m))
	return nil
}

// getMeasure: GET /measures/{id}.
func (a *API) getMeasure(c *gin.Context, client storage.Client) error {
	m, err := a.svc.Measure(c.Request.Context(), client, c.Param("id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, NewMeasureView(m))
	return nil
}

// getMeasureOfKind: GET /measures/{id}/rppg and /cppg, an ended measure of
// that kind only.
func (a *API) getMeasureOfKind(kind storage.Kind) func(*gin.Context, storage.Client) error {
	return func(c *gin.Context, client storage.Client) error {
		m, err := a.svc.MeasureOfKind(c.Request.Context(), client, c.Param("id"), kind)
		if err != nil {
			return err
		}
		c.JSON(http.StatusOK, NewMeasureView(m))
		return nil
	}
}

// deleteMeasure: DELETE /measures/{id}, 200 with an empty body.
func (a *API) deleteMeasure(c *gin.Context, client storage.Client) error {
	if err := a.svc.DeleteMeasure(c.Request.Context(), client, c.Param("id")); err != nil {
		return err
	}
	c.Status(http.StatusOK)
	return nil
}

// listMeasures: GET /measures (kind empty), /measures/rppg, /measures/cppg.
func (a *API) listMeasures(kind storage.Kind) func(*gin.Context, storage.Client) error {
	return func(c *gin.Context, client storage.Client) error {
		query, err := url.ParseQuery(c.Request.URL.RawQuery)
		if err != nil {
			return invalidf("the query string is malformed")
		}
		q, err := ParseListQuery(query, kind)
		if err != nil {
			return err
		}
		page, err := a.svc.Measures(c.Request.Context(), client, q)
		if err != nil {
			return err
		}
		v := listView{Items: make([]MeasureView, len(page.Items)), Total: page.Total, Take: q.Take, Skip: q.Skip}
		for i, m := range page.Items {
			v.Items[i] = NewMeasureView(m)
		}
		c.JSON(http.StatusOK, v)
		return nil
	}
}

// externalUser: GET /external-users/{externalId}.
func (a *API) externalUser(c *gin.Context, client storage.Client) error {
	u, err := a.svc.ExternalUser(c.Request.Context(), client, c.Param("externalId"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, externalUserView{u.ExternalID, u.RPPGCalibrated, u.CPPGCalibrated})
	return nil
}
