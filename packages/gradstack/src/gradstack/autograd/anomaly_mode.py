"""``gradstack.autograd.anomaly_mode``: ``detect_anomaly`` and ``set_detect_anomaly``."""

from gradstack_autograd.anomaly_mode import *  # noqa: F403
from gradstack_autograd.anomaly_mode import __all__  # noqa: F401
