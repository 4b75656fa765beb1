package server

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// TestRequestDeadlineAnswersAsWithTimeout: the lazy deadline of a call
// that may wait on a store answers Deadline, Done and Err as
// context.WithTimeout would from the moment of its first use, and a
// parent's earlier deadline or cancellation wins.
func TestRequestDeadlineAnswersAsWithTimeout(t *testing.T) {
	t.Run("Err without a timer", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			d := &requestDeadline{Context: context.Background(), timeout: time.Second}
			defer d.release()
			start := time.Now()
			if dl, ok := d.Deadline(); !ok || !dl.Equal(start.Add(time.Second)) {
				t.Fatalf("Deadline() = %v, %v; want %v", dl, ok, start.Add(time.Second))
			}
			if err := d.Err(); err != nil {
				t.Fatalf("Err() before the deadline = %v", err)
			}
			time.Sleep(time.Second)
			if err := d.Err(); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Err() at the deadline = %v; want DeadlineExceeded", err)
			}
		})
	})
	t.Run("Done fires at the deadline fixed by the first use", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			d := &requestDeadline{Context: context.Background(), timeout: time.Second}
			defer d.release()
			first, _ := d.Deadline()
			time.Sleep(400 * time.Millisecond)
			done := d.Done()
			time.Sleep(599 * time.Millisecond)
			synctest.Wait()
			select {
			case <-done:
				t.Fatal("Done before the deadline")
			default:
			}
			time.Sleep(time.Millisecond)
			<-done
			if !time.Now().Equal(first) || !errors.Is(d.Err(), context.DeadlineExceeded) {
				t.Fatalf("Done at %v, Err %v; want %v, DeadlineExceeded", time.Now(), d.Err(), first)
			}
		})
	})
	t.Run("the parent's earlier deadline and cancellation", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			parent, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			d := &requestDeadline{Context: parent, timeout: time.Second}
			defer d.release()
			want, _ := parent.Deadline()
			if dl, _ := d.Deadline(); !dl.Equal(want) {
				t.Fatalf("Deadline() = %v; want the parent's %v", dl, want)
			}
			cancel()
			if err := d.Err(); !errors.Is(err, context.Canceled) {
				t.Fatalf("Err() after the parent's cancel = %v; want Canceled", err)
			}
			<-d.Done()
		})
	})
}
