package dsp

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestResultJSON(t *testing.T) {
	r := Result{
		Variables: map[string]Variable{
			HR:          ok(Mean{72.5}),
			Stress:      ok(Level{Level: 2, Scale: Scale{1, 5}}),
			BP:          ok(Pressure{121, 79}),
			BMI:         ok(24.7),
			HRV:         fail(BadRMSSD),
			PhysicalAge: fail(ConformityPoorLight),
		},
		Signal:   &Signal{QualityScore: ok(0.81)},
		Features: &Features{HeartRateBpm: 72.5},
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"variables":{"bmi":{"value":24.7,"error":null},"bp":{"value":{"systole":121,"diastole":79},"error":null},` +
		`"hr":{"value":{"mean":72.5},"error":null},"hrv":{"value":null,"error":"BAD_RMSSD"},` +
		`"physicalAge":{"value":null,"error":"CONFORMITY_POOR_LIGHT"},` +
		`"strs":{"value":{"level":2,"scale":{"min":1,"max":5}},"error":null}},"signal":{"qualityScore":{"value":0.81,"error":null}}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	var back Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	// Stored results come back as generic JSON: the same document, keys of
	// value objects in another order.
	b2, _ := json.Marshal(back)
	var x, y any
	_ = json.Unmarshal(b, &x)
	_ = json.Unmarshal(b2, &y)
	if !reflect.DeepEqual(x, y) {
		t.Errorf("round trip changed the JSON:\n%s", b2)
	}
	if b, _ := json.Marshal(Result{Variables: map[string]Variable{}}); string(b) != `{"variables":{},"signal":null}` {
		t.Errorf("images result: %s", b)
	}
}

func TestVariableJSONRejects(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"both", `{"value":1,"error":"UNKNOWN"}`},
		{"neither", `{"value":null,"error":null}`},
		{"not an object", `[1]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v Variable
			if err := json.Unmarshal([]byte(tc.in), &v); err == nil {
				t.Errorf("accepted %s as %+v", tc.in, v)
			}
		})
	}
	if _, err := json.Marshal(Variable{}); err == nil {
		t.Error("marshalled an empty variable")
	}
}
