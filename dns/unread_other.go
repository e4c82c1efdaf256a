//go:build !linux

package dns

// unread reports whether a datagram waits in the socket's receive queue;
// it cannot tell on this system, and says no: a wait ends on time.
func (u *udpConn) unread() bool { return false }
