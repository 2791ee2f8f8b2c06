package control

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/pulsewire/pulsewire/storage"
)

// createToken: POST /access-tokens.
func (a *API) createToken(c *gin.Context, client storage.Client) error {
	body, err := readBody(c, maxJSONBody)
	if err != nil {
		return err
	}
	req, err := ParseTokenRequest(body)
	if err != nil {
		return err
	}
	t, err := a.svc.CreateToken(c.Request.Context(), client, req)
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, NewTokenView(t))
	return nil
}

// revokeToken: DELETE /access-tokens/{id}, 200 with an empty body.
func (a *API) revokeToken(c *gin.Context, client storage.Client) error {
	if err := a.svc.RevokeToken(c.Request.Context(), client, c.Param("id")); err != nil {
		return err
	}
	c.Status(http.StatusOK)
	return nil
}
