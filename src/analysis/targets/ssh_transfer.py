"""File transfers over an SSH connection: SFTP where the target offers it, else a stream
through ``sh`` (busybox targets); both checked by SHA-256 on both sides. Mixed into
:class:`analysis.targets.ssh.SSHTransport`, which holds the connection."""

from __future__ import annotations

import os
import re
import shlex
import time
from pathlib import Path

import paramiko

from analysis.errors import RemoteCommandError, TargetUnreachable, TransferError
from analysis.targets.transport import SHA256_SH, _sha256

# put without SFTP: $1 = temporary file, $2 = destination, $3 = expected SHA-256,
# $4 = the checksum script. The data arrives on stdin. A stream cut short by a lost
# connection also ends in EOF, so `cat` alone cannot tell: only a complete, matching file
# is renamed, anything else is removed, and only then is the SHA-256 printed (a write to
# a dead connection would kill the script before it cleans up). POSIX sh and busybox.
PUT_SH = (
    'cat > "$1" || { rm -f -- "$1"; exit 1; }; '
    'h=$(sh -c "$4" sh "$1"); '
    'if [ ${#h} -ne 64 ]; then rm -f -- "$1"; echo "cannot checksum on the target" >&2; exit 1; fi; '
    'if [ "$h" != "$3" ]; then rm -f -- "$1"; echo "$h"; exit 3; fi; '
    'if [ -d "$2" ]; then rm -f -- "$1"; echo "$2 is a directory" >&2; exit 1; fi; '
    'mv -f -- "$1" "$2" || { rm -f -- "$1"; exit 1; }; '
    'echo "$h"'
)


class SSHTransfers:
    """``put`` and ``get`` for a class that has ``client``, ``name``, ``_transport()``,
    ``_open(script)`` and ``run``."""

    def _sftp_client(self) -> paramiko.SFTPClient | None:
        """The SFTP session, or None on a target without an SFTP subsystem (dropbear,
        minimal images): transfers then stream over an exec channel. The answer is
        remembered for the connection."""
        if self._no_sftp:
            return None
        if self._sftp is None or self._sftp.sock.closed:
            self._transport()  # a lost connection is TargetUnreachable, not "no SFTP"
            try:
                self._sftp = self.client.open_sftp()
            except paramiko.SSHException as exc:
                self._transport()  # the connection died meanwhile: not a missing subsystem
                if isinstance(exc, paramiko.ChannelException):  # no channel at all (MaxSessions)
                    raise TargetUnreachable(self.name, f"cannot open SFTP: {exc}") from None
                self._no_sftp = True  # the server refused the subsystem: remember it
                return None
            except (OSError, EOFError) as exc:
                raise TargetUnreachable(self.name, f"cannot open SFTP: {exc}") from None
            self._sftp.get_channel().settimeout(self.STREAM_TIMEOUT_S)  # stalled: raise
        return self._sftp

    def put(self, local, remote) -> str:
        """Upload into ``REMOTE.part``, check its SHA-256 on the target against the local
        one, then rename it to ``remote``: the destination never holds a partial or
        wrong file."""
        local = Path(local)
        want = _sha256(local)
        tmp = f"{remote}.part"
        try:
            sftp = self._sftp_client()
            if sftp is None:
                have = self._stream_put(local, tmp, remote, want)
            else:
                have = self._sftp_put(sftp, local, tmp, remote, want)
        except (OSError, paramiko.SSHException, EOFError, RemoteCommandError) as exc:
            self._drop_sftp()
            raise TransferError(self.name, str(local), self._why(exc)) from None
        if have != want:
            raise TransferError(self.name, str(local), f"checksum mismatch ({have} != {want})")
        return have

    def _sftp_put(self, sftp: paramiko.SFTPClient, local: Path, tmp: str, remote: str,
                  want: str) -> str:
        try:
            sftp.put(str(local), tmp)
            have = self.remote_sha256(tmp)
            if have == want:
                sftp.posix_rename(tmp, remote)
                return have
        except BaseException:
            _quietly(sftp.remove, tmp)
            raise
        _quietly(sftp.remove, tmp)
        return have

    def get(self, remote, local, sha256=None) -> str:
        """Download into a hidden ``.NAME.part`` beside ``local``, check its SHA-256
        against the target's (``sha256``, or computed there now), then rename it to
        ``local``."""
        local = Path(local)
        local.parent.mkdir(parents=True, exist_ok=True)
        want = sha256 or self.remote_sha256(remote)
        tmp = local.with_name(f".{local.name}.part")
        try:
            sftp = self._sftp_client()
            if sftp is not None:
                sftp.get(remote, str(tmp))
            else:
                self._stream_get(remote, tmp)
            have = _sha256(tmp)
        except BaseException as exc:
            tmp.unlink(missing_ok=True)
            self._drop_sftp()
            if isinstance(exc, (OSError, paramiko.SSHException, EOFError)):
                raise TransferError(self.name, remote, self._why(exc)) from None
            raise
        if have != want:
            tmp.unlink(missing_ok=True)
            raise TransferError(self.name, remote, f"checksum mismatch ({have} != {want})")
        os.replace(tmp, local)
        return have

    # streaming over an exec channel (no SFTP): `cat` on the target, POSIX sh only

    def _stream_put(self, local: Path, tmp: str, remote: str, want: str) -> str:
        """Stream ``local`` into ``tmp`` on the target; the target renames it to ``remote``
        only if its SHA-256 is ``want``. Returns the SHA-256 the target computed."""
        script = shlex.join(["sh", "-c", PUT_SH, "sh", tmp, remote, want, SHA256_SH])
        chan = self._open(script)
        chan.settimeout(self.STREAM_TIMEOUT_S)
        try:
            with open(local, "rb") as fh:
                while block := fh.read(self.CHUNK):
                    chan.sendall(block)
            chan.shutdown_write()  # EOF: cat finishes, the target checks and renames
            status, out, err = self._finish(chan, remote)
        finally:
            chan.close()
        have = out.decode("ascii", "replace").strip()
        if status != 0 and len(have) == 64 and have != want:
            return have  # put() reports the mismatch
        if status != 0 or len(have) != 64:
            raise OSError(f"writing {remote} on the target failed (exit status {status}): "
                          f"{err.decode(errors='replace').strip() or have or 'no output'}")
        return have

    def _stream_get(self, remote: str, local: Path) -> None:
        """Stream ``remote`` (``cat < FILE`` on the target) into ``local``."""
        chan = self._open(f"cat < {shlex.quote(remote)}")
        chan.settimeout(self.STREAM_TIMEOUT_S)  # recv raises TimeoutError when stalled
        try:
            with open(local, "wb") as fh:
                while block := chan.recv(self.CHUNK):
                    fh.write(block)
            status, _, err = self._finish(chan, remote)
        finally:
            chan.close()
        if status != 0:
            raise OSError(f"reading {remote} on the target failed (exit status {status}): "
                          f"{err.decode(errors='replace').strip()}")

    def _finish(self, chan: paramiko.Channel, remote: str) -> tuple[int, bytes, bytes]:
        """Wait (bounded) for a transfer command to exit: its status, stdout and stderr.
        A lost connection or STREAM_TIMEOUT_S without an exit raises OSError."""
        out, err = bytearray(), bytearray()
        deadline = time.monotonic() + self.STREAM_TIMEOUT_S
        while True:
            while chan.recv_ready():
                out += chan.recv(1 << 16)
            while chan.recv_stderr_ready():
                err += chan.recv_stderr(1 << 16)
            if chan.exit_status_ready() and (chan.eof_received or chan.closed) \
                    and not chan.recv_ready() and not chan.recv_stderr_ready():
                break  # the exit status may overtake the last output: wait for EOF too
            tr = self.client.get_transport()
            if tr is None or not tr.is_active():
                raise OSError(f"connection lost while copying {remote}")
            if time.monotonic() > deadline:
                raise OSError(f"no answer from the target for {self.STREAM_TIMEOUT_S:.0f} s "
                              f"while copying {remote}")
            time.sleep(0.005)
        status = chan.recv_exit_status()
        if status == -1:  # closed without an exit status: the connection went away
            raise OSError(f"connection lost while copying {remote}")
        return status, bytes(out), bytes(err)

    def _why(self, exc: BaseException) -> str:
        if isinstance(exc, TimeoutError):  # socket.timeout: str() is often empty
            return f"no progress for {self.STREAM_TIMEOUT_S:.0f} s, the connection stalled"
        return str(exc) or type(exc).__name__

    def _drop_sftp(self) -> None:
        """After a failed transfer the SFTP session may hold stale replies: the next
        transfer opens a new one."""
        if self._sftp is not None:
            _quietly(self._sftp.close)
            self._sftp = None


def _quietly(fn, *args) -> None:
    """Best-effort cleanup: ``fn(*args)``, ignoring any failure."""
    try:
        fn(*args)
    except Exception:
        pass


def _strip(err: bytearray | bytes) -> str:
    text = bytes(err).decode("utf-8", "replace")
    return re.sub(r"^__TRACELAB_PGID__ \d+\n", "", text, count=1)
