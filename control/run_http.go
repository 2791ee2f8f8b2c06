package control

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/pulsewire/pulsewire/control/metrics"
	"github.com/pulsewire/pulsewire/storage"
)

// verdict reports whether err is the request's fault, which its client
// is told: a body too slow, invalid or too large.
func verdict(err error) bool {
	switch ErrorCode(err) {
	case TooSlow, Invalid, TooLarge:
		return true
	}
	return false
}

// statusClientClosed is the status logged for a run whose client went away
// before the answer (nginx's 499); the client never sees it.
const statusClientClosed = 499

// runRoutes mounts the run routes and the calibration route.
func (a *API) runRoutes(api *gin.RouterGroup) {
	sources := []struct {
		path   string
		new    func() source
		metric metrics.Source
	}{
		{"/rppg/video", func() source { return &videoSource{} }, metrics.SourceVideo},
		{"/rppg/images", func() source { return &imagesSource{} }, metrics.SourceImages},
		{"/rppg/captures", func() source { return &capturesSource{} }, metrics.SourceCaptures},
		{"/rppg/signal", func() source { return &signalSource{k: storage.KindRPPG} }, metrics.SourceRPPGSignal},
		{"/cppg/signal", func() source { return &signalSource{k: storage.KindCPPG} }, metrics.SourceCPPGSignal},
	}
	for _, s := range sources {
		api.POST("/measures"+s.path, a.handle(a.countRuns(s.metric, a.runRoute(s.new, false))))
		api.POST("/measures/:id"+s.path, a.handle(a.countRuns(s.metric, a.runRoute(s.new, true))))
	}
	api.POST("/measures/:id/calibration", a.handle(a.calibrate))
}

// runRoute serves a run route: create-and-run (201) or, with existing, a
// run of the measure in the path (200); both answer the ended measure.
func (a *API) runRoute(newSource func() source, existing bool) func(*gin.Context, storage.Client) error {
	status := http.StatusCreated
	if existing {
		status = http.StatusOK
	}
	return func(c *gin.Context, client storage.Client) error {
		id := ""
		if existing {
			id = c.Param("id")
		}
		m, err := a.run(c, client, newSource(), id)
		// The request's context ends with its connection's reading side:
		// when the client went away, and also when a body is cut off for
		// its pace, or its client sent less than it announced and
		// half-closed the connection. A verdict on the request (408, 400,
		// 413) is answered all the same, for a client still reading it.
		if err != nil && c.Request.Context().Err() != nil && !verdict(err) {
			RequestLogger(c.Request.Context()).Info("run abandoned: the client went away")
			c.AbortWithStatus(statusClientClosed)
			return nil
		}
		if err != nil {
			return err
		}
		c.JSON(status, NewMeasureView(m))
		return nil
	}
}

// run measures what the request carries, for the measure existingID or, when
// it is empty, a new one. It takes an upload place before it reads the body
// (503 when there is none), claims an existing measure at once (so a
// concurrent run is refused before its upload), stores the capture as the
// measure's media, then takes a place in the pool (503 when there is none),
// analyses on a worker and ends the run. Whatever fails leaves no trace: the
// run is abandoned, or, before a new measure was stored, the media stored
// under its id are removed.
func (a *API) run(c *gin.Context, client storage.Client, src source, existingID string) (storage.Measure, error) {
	ctx := c.Request.Context()
	up, err := a.analyzer.startUpload()
	if err != nil {
		return storage.Measure{}, err
	}
	defer up.done()
	var run *Run
	id := uuid.NewString() // a new measure's: its media are stored before its record
	if existingID != "" {
		if run, err = a.svc.StartRun(ctx, client, RunOf{MeasureID: existingID}, src.kind()); err != nil {
			return storage.Measure{}, err
		}
		id = run.Measure().ID
	}
	store := newMediaStore(a.svc.captureMedia(), id)
	var m storage.Measure
	m, run, err = a.measure(c, up, client, src, store, run)
	if err != nil && run != nil && a.svc.deleted(ctx, client, id) {
		// The client deleted the measure during its run (its right at
		// any time): whatever failed then, the measure is gone.
		err = &Error{Code: NotFound, Err: err}
	}
	if err != nil {
		log := RequestLogger(ctx)
		if run != nil {
			if aerr := run.Abandon(ctx); aerr != nil {
				log.Error("abandon run", "err", aerr)
			}
		} else if rerr := store.media.Remove(context.WithoutCancel(ctx), id); rerr != nil {
			log.Error("remove media of a run that failed", "err", rerr)
		}
	}
	return m, err
}

// measure receives the capture and frees the upload place, then takes a
// place in the pool and on a worker reads the inputs, starts a new
// measure's run (run is nil until then), analyses and ends the run. It
// returns the run once it has started, failed or not.
func (a *API) measure(c *gin.Context, up *upload, client storage.Client, src source, store mediaStore, run *Run) (storage.Measure, *Run, error) {
	ctx := c.Request.Context()
	err := a.receive(c, src, store)
	up.done()
	if err != nil {
		return storage.Measure{}, run, err
	}
	t, err := a.analyzer.admit()
	if err != nil {
		return storage.Measure{}, run, err
	}
	defer t.release()
	var m storage.Measure
	err = t.work(ctx, func() error {
		raw, err := src.inputs(ctx, store)
		if err != nil {
			return err
		}
		switch {
		case run == nil:
			n, err := ParseMeasureInput(raw, a.svc.Now())
			if err != nil {
				return err
			}
			if run, err = a.svc.StartRun(ctx, client, RunOf{New: n, NewID: store.id}, src.kind()); err != nil {
				return err
			}
		case raw != nil:
			return invalidf("the inputs of this measure were given when it was created: send only the capture to run it")
		}
		tools, err := a.analyzer.tools()
		if err != nil {
			return err
		}
		res, err := src.analyze(ctx, tools, store, run.Inputs())
		if err != nil {
			return err
		}
		// Images refused by their first bytes are not stored: the
		// measure keeps media only when some were.
		if *store.wrote {
			run.StoredMedia()
		}
		m, err = run.End(ctx, res)
		return err
	})
	return m, run, err
}

// receive lets the source read the body, at its minimum pace (pace.go)
// and within its size limit.
func (a *API) receive(c *gin.Context, src source, store mediaStore) error {
	body := newPacedBody(c.Writer, c.Request.Body, a.analyzer.pace)
	defer body.done()
	c.Request.Body = http.MaxBytesReader(c.Writer, body, src.maxBody())
	return src.receive(c.Request.Context(), c.Request, store)
}

// calibrate: POST /measures/{id}/calibration {"systole","diastole"} (201).
func (a *API) calibrate(c *gin.Context, client storage.Client) error {
	body, err := readBody(c, maxJSONBody)
	if err != nil {
		return err
	}
	ref, err := ParseReference(body)
	if err != nil {
		return err
	}
	cal, err := a.svc.Calibrate(c.Request.Context(), client, c.Param("id"), ref)
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, calibrationView{
		MeasureID: cal.MeasureID, ExternalID: cal.ExternalID, Kind: cal.Kind,
		Systole: cal.Systole, Diastole: cal.Diastole, CreatedAt: formatTime(cal.CreatedAt),
	})
	return nil
}

type calibrationView struct {
	MeasureID  string       `json:"measureId"`
	ExternalID string       `json:"externalId"`
	Kind       storage.Kind `json:"kind"`
	Systole    float64      `json:"systole"`
	Diastole   float64      `json:"diastole"`
	CreatedAt  string       `json:"createdAt"`
}
