"""The reward service: assay over HTTP for trainers (``assay serve``).

``create_app(settings)`` builds the FastAPI app; ``Settings`` says where it listens, the one
folder items may name paths in, the ``/get_reward`` template, and the bounds that answer 413,
422 and 429 instead of growing. Routes: ``GET /healthz``, ``POST /v1/verify``,
``POST /v1/answer-key``, ``POST /get_reward`` (OpenRLHF), OpenAPI at ``/docs``. FastAPI is
imported here, so nothing imports this package until the service is used (``import assay``
stays light). See docs/service.md.
"""

from assay.service._app import app_from_env, create_app
from assay.service._settings import Settings

__all__ = ["Settings", "app_from_env", "create_app"]
