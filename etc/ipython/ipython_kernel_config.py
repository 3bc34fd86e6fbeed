# The kernels of this project's venv (`make` copies this file to .venv/etc/ipython/, the
# lowest layer of IPython's configuration: a profile's own config still applies).
#
# ipykernel >= 7 warns, in every kernel it starts, that the kernel "is running over TCP
# without encryption": papermill (nbclient) starts its kernels with jupyter_client's default
# transport, TCP on 127.0.0.1 without CurveZMQ, and offers no option to change it. The
# messages are still signed (HMAC, key in a 0600 connection file); only this one warning is
# dropped, every other message of the kernel's log still shows.
import logging

UNENCRYPTED_TCP = "Kernel is running over TCP without encryption"


class DropUnencryptedTCPWarning(logging.Filter):
    """Drops ipykernel's warning about its loopback TCP transport, nothing else."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(UNENCRYPTED_TCP)


c = get_config()  # noqa: F821 - defined by the IPython config loader
c.IPKernelApp.logging_config = {
    "filters": {"tracelab_unencrypted_tcp": {"()": DropUnencryptedTCPWarning}},
    "handlers": {"console": {"filters": ["tracelab_unencrypted_tcp"]}},
}
