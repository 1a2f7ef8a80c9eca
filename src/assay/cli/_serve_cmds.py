"""``assay serve``: the reward service (FastAPI on uvicorn), a thin twin of
``assay.service.create_app``. FastAPI and uvicorn are imported inside the command only, so
``assay --help`` and ``import assay`` never load them."""

from __future__ import annotations

import errno
import json
import os
import socket
from pathlib import Path
from typing import Annotated

import typer

from assay._errors import InvalidInput
from assay.cli._boundary import boundary


def _can_listen(host: str, port: int) -> None:
    """Refuse, as bad input naming the option, an address this machine cannot listen on, before
    uvicorn starts (it would log a traceback-like error and exit 1)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise InvalidInput(f"cannot resolve {host!r}: {exc.strerror}", where="--host") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            where = "--port" if exc.errno == errno.EADDRINUSE else "--host"
            raise InvalidInput(
                f"cannot listen on {host}:{port}: {exc.strerror}", where=where
            ) from None


@boundary
def serve(
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port.")] = 8600,
    workers: Annotated[int, typer.Option("--workers", help="uvicorn worker processes.")] = 1,
    workspace_root: Annotated[
        Path | None,
        typer.Option(
            "--workspace-root",
            help="The only folder items may name paths in (none: items naming paths are refused).",
        ),
    ] = None,
    verifier_root: Annotated[
        Path | None,
        typer.Option(
            "--verifier-root",
            help="Keep verifier-side files here, apart from --workspace-root (which is required).",
        ),
    ] = None,
    template: Annotated[
        Path | None,
        typer.Option(
            "--template", help="Task template turning /get_reward labels into items (JSON file)."
        ),
    ] = None,
    sandbox_jobs: Annotated[
        int | None,
        typer.Option("--sandbox-jobs", help="Sandboxed items run at once (default: one per core)."),
    ] = None,
    queue_bound: Annotated[
        int, typer.Option("--queue", help="Sandboxed items admitted and unfinished before 429.")
    ] = 1024,
    max_body_bytes: Annotated[
        int, typer.Option("--max-body-bytes", help="Largest request body (413 past it).")
    ] = 32 * 1024 * 1024,
    max_requests: Annotated[
        int, typer.Option("--max-requests", help="Requests judged at once (429 past it).")
    ] = 64,
    max_items: Annotated[
        int, typer.Option("--max-items", help="Most items in one request (422 past it).")
    ] = 10_000,
    proxy: Annotated[
        str | None,
        typer.Option(
            "--proxy",
            help="The address of a reverse proxy whose X-Forwarded-For and X-Forwarded-Proto "
            "are trusted (it must overwrite them); none: a client's address is its connection's.",
        ),
    ] = None,
) -> None:
    """Serve the reward API (/v1/verify, /v1/answer-key, OpenRLHF's /get_reward; docs at /docs)."""
    import uvicorn
    from pydantic import ValidationError

    from assay.episodes import Template
    from assay.service import Settings, create_app

    if not 0 < port < 65536:
        raise InvalidInput("must be a TCP port, 1 to 65535", where="--port")
    if workspace_root is not None:
        if not workspace_root.is_dir():
            raise InvalidInput(f"not a folder: {workspace_root}", where="--workspace-root")
        workspace_root = workspace_root.resolve()
    if verifier_root is not None:
        if workspace_root is None:
            raise InvalidInput(
                "needs --workspace-root: the folder workspaces are read from",
                where="--verifier-root",
            )
        if not verifier_root.is_dir():
            raise InvalidInput(f"not a folder: {verifier_root}", where="--verifier-root")
        verifier_root = verifier_root.resolve()
        if verifier_root == workspace_root or workspace_root in verifier_root.parents:
            raise InvalidInput(
                "must not lie in --workspace-root (a workspace could hold the verifier's files)",
                where="--verifier-root",
            )
    if template is not None:
        Template.load(template)  # a bad template is exit 2 here, naming the file and field
        template = template.resolve()
    values: dict[str, object] = {
        "host": host,
        "port": port,
        "workers": workers,
        "workspace_root": workspace_root,
        "verifier_root": verifier_root,
        "template": template,
        "queue_bound": queue_bound,
        "max_body_bytes": max_body_bytes,
        "max_items": max_items,
        "max_requests": max_requests,
    }
    if sandbox_jobs is not None:
        values["sandbox_jobs"] = sandbox_jobs
    try:
        settings = Settings.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        option = "--" + str(first["loc"][0]).replace("_", "-").replace("queue-bound", "queue")
        raise InvalidInput(str(first["msg"]), where=option) from None
    _can_listen(host, port)
    shown = f"[{host}]" if ":" in host else host
    typer.echo(f"assay: serving on http://{shown}:{port} (API docs at http://{shown}:{port}/docs)")
    typer.echo(
        f"assay: pages for people at http://{shown}:{port}/ (sign in with a token from "
        "`assay user add`)"
    )
    options: dict[str, object] = {"host": host, "port": port, "log_level": "warning"}
    options["access_log"] = False
    # uvicorn trusts X-Forwarded-For from 127.0.0.1 by default: any client on the host could
    # then name its own address (past the sign-in limits); only a named proxy is believed
    options["proxy_headers"] = proxy is not None
    if proxy is not None:
        options["forwarded_allow_ips"] = proxy
    if workers == 1:
        uvicorn.run(create_app(settings), **options)  # type: ignore[arg-type]
    else:
        os.environ["ASSAY_SERVICE_SETTINGS"] = json.dumps(settings.model_dump(mode="json"))
        uvicorn.run(
            "assay.service:app_from_env",
            factory=True,
            workers=workers,
            **options,  # type: ignore[arg-type]
        )


def register(app: typer.Typer) -> None:
    """Add ``assay serve`` to ``app``."""
    app.command("serve")(serve)
