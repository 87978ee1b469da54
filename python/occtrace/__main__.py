"""`python -m occtrace ...` is `occtrace ...`."""
from occtrace._tools import occtrace

occtrace()
