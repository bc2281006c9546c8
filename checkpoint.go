package wgpueval

import (
	"fmt"
	"os"
	"time"

	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// checkpointEvery is how often a run's state is saved at most.
const checkpointEvery = time.Second

// checkpointer saves a run's state to a checkpoint file as batches finish.
type checkpointer struct {
	path   string
	id     pipeline.RunIdentity
	resume *pipeline.State // the state to resume from; nil for a fresh run
	last   *pipeline.State // the newest state, saved or not
	saved  time.Time
	dirty  bool
}

// openCheckpointer reads path's checkpoint when there is one: it must be of
// the run id describes.
func openCheckpointer(path string, id pipeline.RunIdentity) (*checkpointer, error) {
	c := &checkpointer{path: path, id: id}
	ck, err := pipeline.LoadCheckpoint(path)
	switch {
	case pipeline.IsNoCheckpoint(err):
		return c, nil
	case err != nil:
		return nil, err
	}
	if d := ck.Run.Diff(id); d != "" {
		return nil, fmt.Errorf("checkpoint %s is of another run (%s): give another --checkpoint file, or delete it to start over", path, d)
	}
	c.resume = &ck.State
	return c, nil
}

// save is pipeline.EvalConfig.OnBatch: it keeps s and writes it when the
// last write is older than checkpointEvery.
func (c *checkpointer) save(s pipeline.State) error {
	c.last, c.dirty = &s, true
	if time.Since(c.saved) < checkpointEvery {
		return nil
	}
	return c.write()
}

func (c *checkpointer) write() error {
	if err := (&pipeline.Checkpoint{Run: c.id, State: *c.last}).Save(c.path); err != nil {
		return err
	}
	c.saved, c.dirty = time.Now(), false
	return nil
}

// finish removes the checkpoint of a completed run, or writes the newest
// state of an interrupted one.
func (c *checkpointer) finish(complete bool) error {
	if complete {
		if err := os.Remove(c.path); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("remove checkpoint: %w", err)
		}
		return nil
	}
	if c.dirty {
		return c.write()
	}
	return nil
}
