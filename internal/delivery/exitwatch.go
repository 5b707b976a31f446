package delivery

// The settlement loop settles what a gone runtime process left open at
// every SettleEvery tick. A live process on this host that owned open
// operations at a pass is also watched for its exit (a pidfd on Linux),
// so those operations are settled as soon as it is gone rather than up to
// a tick later: a turn that runs or waits on an approval for longer than a
// tick is settled at once when its runtime dies. An operation opened and
// orphaned between two passes still waits for the next tick, which also
// stays the fallback for other hosts, other systems and a failed watch.

// watchOwner starts watching pid, a live owner of open operations on this
// host, unless it is watched already, the service is closed, or pid cannot
// be watched. When pid exits the settlement loop is woken.
func (s *Service) watchOwner(pid int) {
	if s.opts.WatchExit == nil || pid <= 0 {
		return
	}
	s.ownerMu.Lock()
	defer s.ownerMu.Unlock()
	select {
	case <-s.stop:
		return
	default:
	}
	if s.watched[pid] {
		return
	}
	exited, stop := s.opts.WatchExit(pid)
	if exited == nil {
		return
	}
	s.watched[pid] = true
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		defer stop()
		select {
		case <-exited:
		case <-s.stop:
			return
		}
		s.ownerMu.Lock()
		delete(s.watched, pid)
		s.ownerMu.Unlock()
		select {
		case s.ownerExited <- struct{}{}:
		default: // a wake-up is pending already
		}
	}()
}
