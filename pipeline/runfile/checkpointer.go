package runfile

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// checkpointEvery is how often a run's state is saved at most.
const checkpointEvery = time.Second

// Checkpointer saves a run's state to a checkpoint file as batches finish.
// With per-token output it also appends each batch's records to a sidecar
// log (the checkpoint's path plus perTokenLogSuffix), synced before every
// checkpoint write, so that a resumed run has every record of the samples
// the checkpoint counts as done.
type Checkpointer struct {
	path    string
	id      RunIdentity
	resume  *pipeline.State     // the state to resume from; nil for a fresh run
	records []pipeline.TokenNLL // the per-token records of resume
	log     *PerTokenLog
	last    *pipeline.State // the newest state, saved or not
	saved   time.Time
	dirty   bool
	// saveFailed: the last write Save tried failed (its error stopped the run).
	saveFailed bool
	unlock     func() // releases the lock on path + lockSuffix
	noLock     string // why no lock is held ("" when one is)
}

// perTokenLogSuffix names a checkpoint's per-token sidecar, and lockSuffix
// the file locked while a run uses the checkpoint.
const (
	perTokenLogSuffix = ".pertoken"
	lockSuffix        = ".lock"
)

// CheckpointSidecars are the files a run with the checkpoint at path keeps
// beside it (its per-token log and its lock), which the run writes and
// removes: no output of the run may be one of them.
func CheckpointSidecars(path string) []string {
	return []string{path + perTokenLogSuffix, path + lockSuffix}
}

// errCheckpointBusy is lockCheckpoint's error when another process holds the
// lock, and errNoLocks its error on a file system that does not lock files.
var (
	errCheckpointBusy = errors.New("in use")
	errNoLocks        = errors.New("its file system does not lock files")
)

// OpenCheckpointer reads path's checkpoint when there is one: it must be of
// the run id describes. With id.PerToken it opens the sidecar log at the
// records the checkpoint counts valid (none for a fresh run).
func OpenCheckpointer(path string, id RunIdentity) (c *Checkpointer, err error) {
	unlock, err := lockCheckpoint(path + lockSuffix)
	noLock := ""
	if errors.Is(err, errNoLocks) {
		// Run without the lock, as where the system has none, and say so:
		// a checkpoint must be usable on a cluster's shared file system.
		os.Remove(path + lockSuffix)
		noLock = fmt.Sprintf("checkpoint %s: %v: nothing keeps another run off it (give each run its own --checkpoint)", path, err)
		unlock, err = func() {}, nil
	}
	if errors.Is(err, errCheckpointBusy) {
		return nil, fmt.Errorf("checkpoint %s is in use by another run (it holds %s%s): wait for it to finish, or give this run another --checkpoint file",
			path, path, lockSuffix)
	}
	if err != nil {
		os.Remove(path + lockSuffix) // no lock file left by a run that could not start
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	defer func() {
		if err != nil { // a refused run leaves no lock file beside the user's files
			os.Remove(path + lockSuffix)
			unlock()
		}
	}()
	c = &Checkpointer{path: path, id: id, unlock: unlock, noLock: noLock}
	ck, err := LoadRunCheckpoint(path)
	switch {
	case IsNoRunCheckpoint(err):
		ck = nil
	case err != nil:
		return nil, err
	default:
		if d := ck.Run.Diff(id); d != "" {
			return nil, fmt.Errorf("checkpoint %s is of another run (%s): give another --checkpoint file, or delete it to start over", path, d)
		}
		c.resume = &ck.State
	}
	if id.PerToken {
		valid := 0
		if ck != nil {
			valid = ck.PerTokenRecords
		}
		if c.log, c.records, err = OpenPerTokenLog(path+perTokenLogSuffix, valid, id.TopLogprobs); err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", path, err)
		}
	}
	return c, nil
}

// AppendRecords is pipeline.EvalConfig.OnPerToken: a batch's records go to
// the sidecar log.
func (c *Checkpointer) AppendRecords(records []pipeline.TokenNLL) error {
	return c.log.Append(records)
}

// Save is pipeline.EvalConfig.OnBatch: it keeps s and writes it when the
// last write is older than checkpointEvery.
func (c *Checkpointer) Save(s pipeline.State) error {
	c.last, c.dirty = &s, true
	if time.Since(c.saved) < checkpointEvery {
		return nil
	}
	err := c.write()
	c.saveFailed = err != nil
	return err
}

// write syncs the sidecar log, then writes the checkpoint that counts its
// records valid.
func (c *Checkpointer) write() error {
	ck := &RunCheckpoint{Run: c.id, State: *c.last}
	if c.log != nil {
		n, err := c.log.Sync()
		if err != nil {
			return err
		}
		if n != c.last.Sums.Count {
			return fmt.Errorf("checkpoint: %d per-token records logged for %d targets scored", n, c.last.Sums.Count) // our bug
		}
		ck.PerTokenRecords = n
	}
	if err := ck.Save(c.path); err != nil {
		return err
	}
	c.saved, c.dirty = time.Now(), false
	return nil
}

// Finish removes the checkpoint of a completed run (whose per-token file, if
// any, is written), then its sidecar log; or writes the newest state of an
// interrupted one and closes the log. An interrupted run that never had a
// checkpoint to keep (none resumed, no batch finished) leaves no sidecar log
// and no lock file beside the user's files either.
func (c *Checkpointer) Finish(complete bool) error {
	defer c.unlock()
	if !complete && c.resume == nil && c.last == nil {
		os.Remove(c.path + lockSuffix) // tidy; the lock is held until the deferred unlock
		if c.log != nil {
			return c.log.Remove()
		}
		return nil
	}
	if complete {
		if err := os.Remove(c.path); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("remove checkpoint: %w", err)
		}
		os.Remove(c.path + lockSuffix) // tidy; the lock is held until the deferred unlock
		if c.log != nil {
			return c.log.Remove()
		}
		return nil
	}
	var err error
	if c.dirty {
		err = c.write()
		if err != nil && c.saveFailed {
			// The run stopped because Save failed (a full disk), and its
			// error said so: this last try's failure says nothing new.
			err = nil
		}
	}
	if c.log != nil {
		err = errors.Join(err, c.log.Close())
	}
	return err
}

// Resume is the state the checkpoint file held when it was opened (nil for a
// fresh run), and its per-token records.
func (c *Checkpointer) Resume() (*pipeline.State, []pipeline.TokenNLL) { return c.resume, c.records }

// Kept reports whether the checkpoint file holds a state of the run (one it
// resumed, or one this session saved), which a run stopped by an error can
// continue from.
func (c *Checkpointer) Kept() bool { return c.resume != nil || !c.saved.IsZero() }

// NoLock says why no lock keeps other runs off the checkpoint (its file
// system does not lock files); "" where the lock is held.
func (c *Checkpointer) NoLock() string { return c.noLock }

// KeepsRecords reports whether the run's per-token records go to the
// sidecar log (AppendRecords).
func (c *Checkpointer) KeepsRecords() bool { return c.log != nil }
