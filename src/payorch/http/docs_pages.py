"""/docs (Swagger UI) and /redoc, served whole by the service: they render with no network.

FastAPI's default pages load their JavaScript, CSS, favicon and (ReDoc) Google fonts from other
hosts, so behind a firewall they are blank. The same assets come from the `fastapi-offline`
package (Swagger UI 5 and ReDoc 2 bundles) and are served under /docs-assets; the pages are built
with FastAPI's own `get_swagger_ui_html` / `get_redoc_html`, every URL same-origin. The ReDoc
bundle is served with its one image on another host (the "by Redocly" logo) replaced by an empty
inline image, so the page asks for nothing elsewhere, whatever the browser's policy.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles

ASSETS_URL = "/docs-assets"
_ASSETS = Path(str(files("fastapi_offline") / "static"))
# Swagger UI's default validator badge fetches validator.swagger.io: no page may call another host.
_SWAGGER_PARAMETERS: dict[str, object] = {"validatorUrl": None}
# The ReDoc bundle hard-codes one image on another host (its "by Redocly" logo, hidden when it
# fails to load): replaced in the bundle served (_redoc_bundle), and the pages' policy lets the
# browser load nothing from anywhere but here.
_REDOC_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"
_NO_IMAGE = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='0' height='0'/%3E"
REDOC_BUNDLE = "redoc.standalone.js"
# Inline script and styles: FastAPI's page starts Swagger UI inline; both UIs set styles inline.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; frame-ancestors 'self'"
)


def install_docs_pages(app: FastAPI) -> None:
    """Serve /docs and /redoc from local assets; create the app with docs_url=redoc_url=None."""

    @app.get(f"{ASSETS_URL}/{REDOC_BUNDLE}", include_in_schema=False)
    async def redoc_bundle() -> Response:  # before the mount, which would serve the file as is
        return Response(_redoc_bundle(), media_type="text/javascript; charset=utf-8")

    app.mount(ASSETS_URL, StaticFiles(directory=_ASSETS), name="docs-assets")

    def _urls(request: Request) -> tuple[str, str]:
        # root_path: behind a reverse proxy under a prefix, the browser asks for /prefix/...
        root = str(request.scope.get("root_path", "")).rstrip("/")
        return root, f"{root}{app.openapi_url}"

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        root, openapi_url = _urls(request)
        assets = f"{root}{ASSETS_URL}"
        page = get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{app.title} - API reference",
            swagger_js_url=f"{assets}/swagger-ui-bundle.js",
            swagger_css_url=f"{assets}/swagger-ui.css",
            swagger_favicon_url=f"{assets}/favicon.png",
            swagger_ui_parameters=_SWAGGER_PARAMETERS,
        )
        return _confined(page)

    @app.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        root, openapi_url = _urls(request)
        return _confined(
            get_redoc_html(
                openapi_url=openapi_url,
                title=f"{app.title} - API reference",
                redoc_js_url=f"{root}{ASSETS_URL}/{REDOC_BUNDLE}",
                redoc_favicon_url=f"{root}{ASSETS_URL}/favicon.png",
                with_google_fonts=False,
            )
        )


@cache
def _redoc_bundle() -> bytes:
    return (_ASSETS / REDOC_BUNDLE).read_text("utf-8").replace(_REDOC_LOGO, _NO_IMAGE).encode()


def _confined(page: HTMLResponse) -> HTMLResponse:
    page.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    return page
