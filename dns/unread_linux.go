package dns

import "golang.org/x/sys/unix"

// unread reports whether a datagram waits in the socket's receive queue,
// not read yet (SIOCINQ: the size of the next one, 0 if none).
func (u *udpConn) unread() bool {
	rc, err := u.conn.SyscallConn()
	if err != nil {
		return false
	}
	n := 0
	if rc.Control(func(fd uintptr) { n, err = unix.IoctlGetInt(int(fd), unix.SIOCINQ) }) != nil || err != nil {
		return false
	}
	return n > 0
}
