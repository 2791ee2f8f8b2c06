package control

import (
	"encoding/json"
	"time"

	"github.com/pulsewire/pulsewire/storage"
)

// timeFormat writes every timestamp of the API: ISO 8601, UTC, milliseconds.
const timeFormat = "2006-01-02T15:04:05.000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeFormat) }

// MeasureView is a measure as the API shows it: the fields each
// status allows and no other. The session server pushes the same view.
type MeasureView struct {
	ID                string           `json:"id"`
	Status            storage.Status   `json:"status"`
	CreatedAt         string           `json:"createdAt"`
	StartedAt         string           `json:"startedAt,omitempty"`
	EndedAt           string           `json:"endedAt,omitempty"`
	DesiredVariables  []string         `json:"desiredVariables"`
	UnwantedVariables []string         `json:"unwantedVariables"`
	ReturnedVariables *[]string        `json:"returnedVariables,omitempty"`
	Signal            *json.RawMessage `json:"signal,omitempty"`
	Variables         *json.RawMessage `json:"variables,omitempty"`
	UserData          *UserDataView    `json:"userData"`
	Tags              []string         `json:"tags"`
	// MediaKept, an addition to the documented fields, only on ended measures, says
	// whether the capture was kept as the measure's media; absent when not
	// recorded (ended before this version).
	MediaKept *bool `json:"mediaKept,omitempty"`
}

// UserDataView is userData as shown: every field present, null when not
// sent; a date of birth shows as the age it gave.
type UserDataView struct {
	ExternalID    *string `json:"externalId"`
	Sex           *string `json:"sex"`
	Age           *int64  `json:"age"`
	Weight        *int64  `json:"weight"`
	Height        *int64  `json:"height"`
	SmokingStatus *string `json:"smokingStatus"`
}

// NewMeasureView shows m. A created measure shows no startedAt and nothing
// after it; a started one no endedAt, returnedVariables, signal or
// variables; an ended one all of them (signal may be null).
func NewMeasureView(m storage.Measure) MeasureView {
	v := MeasureView{
		ID:                m.ID,
		Status:            m.Status,
		CreatedAt:         formatTime(m.CreatedAt),
		DesiredVariables:  m.DesiredVariables,
		UnwantedVariables: m.UnwantedVariables,
		Tags:              m.Tags,
	}
	if v.Tags == nil {
		v.Tags = []string{}
	}
	if u := m.UserData; u != nil {
		v.UserData = &UserDataView{u.ExternalID, u.Sex, u.Age, u.Weight, u.Height, u.SmokingStatus}
	}
	if m.Status == storage.StatusCreated {
		return v
	}
	v.StartedAt = formatTime(m.StartedAt)
	if m.Status != storage.StatusEnded {
		return v
	}
	v.EndedAt = formatTime(m.EndedAt)
	returned := m.ReturnedVariables
	if returned == nil {
		returned = []string{}
	}
	signal, variables := m.Signal, m.Variables
	if signal == nil {
		signal = json.RawMessage("null")
	}
	if variables == nil {
		variables = json.RawMessage("{}")
	}
	v.ReturnedVariables, v.Signal, v.Variables = &returned, &signal, &variables
	v.MediaKept = m.MediaKept
	return v
}

// TokenView is a created token as POST /access-tokens answers it, the one moment its value is shown.
type TokenView struct {
	ID          string           `json:"id"`
	Value       string           `json:"value"`
	Description *string          `json:"description"`
	Permissions []PermissionView `json:"permissions"`
	ExpiresAt   string           `json:"expiresAt"`
	CreatedAt   string           `json:"createdAt"`
}

// PermissionView is one permission of a TokenView.
type PermissionView struct {
	Name        string `json:"name"`
	MaxSessions *int64 `json:"maxSessions"`
}

// NewTokenView shows t.
func NewTokenView(t CreatedToken) TokenView {
	v := TokenView{
		ID:          t.ID,
		Value:       t.Value,
		Description: t.Description,
		Permissions: make([]PermissionView, len(t.Permissions)),
		ExpiresAt:   formatTime(t.ExpiresAt),
		CreatedAt:   formatTime(t.CreatedAt),
	}
	for i, p := range t.Permissions {
		v.Permissions[i] = PermissionView{p.Name, p.MaxSessions}
	}
	return v
}

type listView struct {
	Items []MeasureView `json:"items"`
	Total int           `json:"total"`
	Take  int           `json:"take"`
	Skip  int           `json:"skip"`
}

type externalUserView struct {
	ExternalID     string `json:"externalId"`
	RPPGCalibrated bool   `json:"rppgCalibrated"`
	CPPGCalibrated bool   `json:"cppgCalibrated"`
}
