"""What the browser tests share: Debian's Chromium launched by Playwright's async API, a live
server for it, a page at one of the widths every page is looked at (1280 and 390 px), screenshots
at both widths, signing in to the dashboard (``signed_in``: a new application's admin on a page),
and the moves that load a new page.

Playwright is imported only when a browser is started (or for type checking): modules that import
this one are collected without it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

import httpx

from tests.live import create_sandbox, live_server, payorch_env
from tests.needs import missing
from tests.totp_codes import fresh_code

if TYPE_CHECKING:
    from playwright.async_api import Browser, Locator, Page, Route

CHROMIUM = "/usr/bin/chromium"
ARGS = ("--no-sandbox", "--disable-gpu", "--disable-background-networking")
WIDTHS = ((1280, 900), (390, 844))  # (width, height): a desktop and a phone
ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / "build" / "screenshots"  # git-ignored


class Server(NamedTuple):
    """A live `payorch serve`: its address and the environment its command line runs with
    (``url, env = server`` unpacks it)."""

    url: str
    env: dict[str, str]


def need_chromium() -> None:
    """Skipped without Debian's Chromium (a failure in CI: tests/needs.py)."""
    if not Path(CHROMIUM).exists():
        missing("Debian chromium is not installed (apt-get install chromium)")


# The output of each running `serve_payorch` (its log), by its URL: ``arrives`` shows its end.
_LOGS: dict[str, Path] = {}


@contextmanager
def serve_payorch(database_url: str, *serve_args: str) -> Iterator[Server]:
    """`payorch serve` (``serve_args``, e.g. "--no-worker") on ``database_url`` for a browser
    test; skipped before it starts when there is no Chromium. The command line's environment
    names the server's public URL, as the server's own does. Its output goes to a named file,
    read by path (never through the server's own descriptor, whose offset it writes at)."""
    need_chromium()
    env = payorch_env(database_url)
    with tempfile.NamedTemporaryFile("w+", prefix="payorch-serve-", suffix=".log") as output:
        with live_server(env, *serve_args, output=output) as url:
            _LOGS[url] = Path(output.name)
            try:
                yield Server(url, {**env, "PAYORCH_PUBLIC_URL": url})
            finally:
                _LOGS.pop(url, None)


def backend(database_url: str) -> str:
    return "postgres" if database_url.startswith("postgres") else "sqlite"


def shots_dir(folder: str = "", default: Path = SCREENSHOTS) -> Path:
    """Where screenshots go: ``folder`` under PAYORCH_E2E_SCREENSHOTS, or under ``default``
    (build/screenshots/); made if missing."""
    target = Path(os.environ.get("PAYORCH_E2E_SCREENSHOTS", default)) / folder
    target.mkdir(parents=True, exist_ok=True)
    return target


# The worker's one Chromium (a launch took 1-2 s idle, 6 s at load 13): the browser tests share it,
# each in contexts of its own, closed when its block ends; closed at the session's end
# (close_shared, from tests/conftest.py). (playwright, browser, the event loop it runs on).
_SHARED: list[tuple[Any, Browser, asyncio.AbstractEventLoop]] = []


async def _shared_browser() -> Browser:
    loop = asyncio.get_running_loop()
    if _SHARED and (_SHARED[0][2] is not loop or not _SHARED[0][1].is_connected()):
        await close_shared()  # another loop's, or it went away: a new one
    if not _SHARED:
        from playwright.async_api import async_playwright

        playwright = await async_playwright().start()
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=list(ARGS))
        _SHARED.append((playwright, browser, loop))
    return _SHARED[0][1]


async def close_shared() -> None:
    """Close the worker's shared Chromium, if one was launched (on the loop it runs on)."""
    while _SHARED:
        playwright, browser, loop = _SHARED.pop()
        if loop is asyncio.get_running_loop() and not loop.is_closed():
            with contextlib.suppress(Exception):
                await browser.close()
            with contextlib.suppress(Exception):
                await playwright.stop()


@asynccontextmanager
async def chromium(*args: str) -> AsyncIterator[Browser]:
    """Debian's Chromium, headless, with the common arguments. Without ``args``: the worker's
    shared one, every context opened in the block (pages included) closed at its end, so each
    test starts with none; with ``args``: a browser of its own, closed at the end."""
    if not args:
        browser = await _shared_browser()
        try:
            yield browser
        finally:
            for context in list(browser.contexts):
                with contextlib.suppress(Exception):
                    await context.close()
        return
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=[*ARGS, *args])
        try:
            yield browser
        finally:
            await browser.close()


async def page_at(browser: Browser, size: tuple[int, int] = WIDTHS[0], **options: Any) -> Page:
    """A page in a new context whose viewport is ``size`` (width, height); ``options`` are the
    context's (bypass_csp, accept_downloads, ...). ``page.context`` opens more pages in it."""
    width, height = size
    context = await browser.new_context(viewport={"width": width, "height": height}, **options)
    return await context.new_page()


async def screenshot(
    page: Page,
    directory: Path,
    name: str,
    *,
    full_page: bool = True,
    focus: Locator | None = None,
    check: Callable[[Page, str, int], Awaitable[None]] | None = None,
) -> None:
    """``name``-{width}.png in ``directory`` at each of WIDTHS (``focus`` scrolled into view
    first; ``check`` run at each width), then the page back at the first width."""
    for width, height in WIDTHS:
        await page.set_viewport_size({"width": width, "height": height})
        if focus is not None:
            await focus.scroll_into_view_if_needed()
        await page.screenshot(path=str(directory / f"{name}-{width}.png"), full_page=full_page)
        if check is not None:
            await check(page, name, width)
    await page.set_viewport_size({"width": WIDTHS[0][0], "height": WIDTHS[0][1]})


async def fits_the_width(page: Page, name: str, width: int) -> None:
    """Nothing on the page is wider than the screen (a ``check`` for screenshot)."""
    overflow = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"{name} is {overflow} px wider than {width}"


async def follow(page: Page, target: Locator) -> None:
    """Clicks ``target`` (a button or a link) and waits for the page it leads to."""
    async with page.expect_navigation():
        await target.click()


async def submit(page: Page, button: str, within: Locator | None = None) -> None:
    """Presses the button named ``button`` (in ``within``) and waits for the page it leads to."""
    await follow(page, (within or page).get_by_role("button", name=button))


# A form the page does not show, built and sent in it with the session's own CSRF token (as a
# forged post would be): page.evaluate(SUBMIT_IN_PAGE, [action, fields]).
SUBMIT_IN_PAGE = """([action, fields]) => {
  const form = document.createElement("form");
  form.method = "post";
  form.action = action;
  const all = {...fields, csrf: document.querySelector('form[action$="/sign-out"] input[name=csrf]').value};
  for (const [name, value] of Object.entries(all)) {
    const input = document.createElement("input");
    input.type = "hidden"; input.name = name; input.value = value;
    form.appendChild(input);
  }
  document.body.appendChild(form);
  form.submit();
}"""


@dataclass(frozen=True)
class BrowserPerson:
    email: str
    password: str
    totp_secret: str


_PEOPLE: dict[tuple[str, str], BrowserPerson] = {}  # by (url, the application's key)
PASSWORD = "a long enough test password"
TOTP_CODE_LABEL = "Code from your authenticator app, or a recovery code"


async def invite_url(url: str, api_key: str, email: str, role: str = "admin") -> str:
    """An invite of ``role`` made through the API with the application's key (an admin: an owner
    is made only by an owner or the operator's command line)."""
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        made = await http.post(
            "/v1/admin/users",
            json={"email": email, "role": role},
            headers={"Authorization": f"Bearer {api_key}"},
        )
    assert made.status_code == 201, made.text
    return str(made.json()["invite_url"])


async def accept_invite(page: Page, invite: str, password: str = PASSWORD) -> None:
    """Sets the password on the invite's page (then the enrollment page or the overview)."""
    await page.goto(invite)
    await page.get_by_label("New password").fill(password)
    await page.get_by_label("The same password again").fill(password)
    await submit(page, "Set my password")


async def enroll_totp(page: Page) -> str:
    """On the enrollment page: reads the key, types its code; returns the key (the recovery
    codes' page is loaded)."""
    secret = (await page.locator("#totp-secret").inner_text()).replace(" ", "")
    await page.get_by_label("Code from your app").fill(await fresh_code(secret))
    await submit(page, "Confirm and sign in")
    return secret


async def sign_in(page: Page, url: str, api_key: str) -> None:
    """Signs in to the dashboard at ``url`` as an admin of ``api_key``'s application (invited
    through the API, with TOTP, on the first call; password and code afterwards): the overview
    is loaded."""
    person = _PEOPLE.get((url, api_key))
    if person is None:
        email = f"admin-{secrets.token_hex(6)}@example.com"
        await accept_invite(page, await invite_url(url, api_key, email))
        secret = await enroll_totp(page)
        _PEOPLE[(url, api_key)] = BrowserPerson(email, PASSWORD, secret)
        await follow(page, page.get_by_role("link", name="Continue to the dashboard"))
        return
    await page.goto(url + "/dashboard/sign-in")
    await page.get_by_label("Email").fill(person.email)
    await page.get_by_label("Password").fill(person.password)
    await submit(page, "Sign in")
    await page.get_by_label(TOTP_CODE_LABEL).fill(await fresh_code(person.totp_secret))
    await submit(page, "Confirm")


class SignedIn(NamedTuple):
    """A new sandbox application of a live server, its admin signed in on a page at 1280 px."""

    url: str
    app: dict[str, str]  # tests.live.create_sandbox's answer: api_key, application_id, ...
    page: Page
    shots: Path  # where this database's screenshots go


@asynccontextmanager
async def signed_in(server: Server, database_url: str) -> AsyncIterator[SignedIn]:
    """The opening of a dashboard page's browser test: a sandbox application made by the
    command line, Chromium, and its admin signed in (``sign_in``)."""
    url, env = server
    app = create_sandbox(env)
    async with chromium() as browser:
        page = await page_at(browser)
        await sign_in(page, url, app["api_key"])
        yield SignedIn(url, app, page, shots_dir(backend(database_url)))


async def approve_at_provider(page: Page, checkout_url: str, back_to: str) -> None:
    """The buyer approves at the simulated provider's page and is back at ``back_to``."""
    await page.goto(checkout_url)
    await page.click('button[name="outcome"][value="approve"]')
    await arrives(page, back_to)


async def arrives(page: Page, url: str, timeout_ms: float = 30_000) -> None:
    """``page.wait_for_url(url)``; when it times out, the failure says where the page is instead
    (its URL and text, a screenshot in build/screenshots/timeouts/) and ends with the last lines
    of the log of the `serve_payorch` at ``url``'s address: a redirect elsewhere and a request
    that never answered look the same to wait_for_url."""
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    began = time.monotonic()
    try:
        await page.wait_for_url(url, timeout=timeout_ms)
    except PlaywrightTimeout as error:
        waited = time.monotonic() - began
        raise AssertionError(
            f"not at {url} after {waited:.1f} s; the page is at {page.url}\n"
            f"{await _seen(page)}\n{_log_end(url)}"
        ) from error


async def _seen(page: Page) -> str:
    """The page's text (its start) and a screenshot of it, as far as they can be had."""
    try:
        text = (await page.locator("body").inner_text(timeout=5_000))[:2000]
    except Exception as exc:  # noqa: BLE001 - a page that cannot be read is said so
        text = f"(its text could not be read: {exc})"
    shot = shots_dir("timeouts") / f"{secrets.token_hex(4)}.png"
    try:
        await page.screenshot(path=str(shot), timeout=5_000)
    except Exception as exc:  # noqa: BLE001
        return f"the page's text:\n{text}\n(no screenshot: {exc})"
    return f"the page's text:\n{text}\nscreenshot: {shot}"


def _log_end(url: str, lines: int = 40) -> str:
    parts = urlsplit(url)
    log = _LOGS.get(f"{parts.scheme}://{parts.netloc}")
    if log is None:
        return "(no log of a serve_payorch at that address)"
    tail = log.read_text(errors="replace").splitlines()[-lines:]
    return "the server's log, its last lines:\n" + "\n".join(line[:600] for line in tail)


async def keep_to_host(
    page: Page, url: str, refused: list[str] | None = None, served: list[str] | None = None
) -> None:
    """Every request of ``page`` to another host than ``url``'s is refused (as if offline), and
    noted in ``refused``; those to ``url``'s host are noted in ``served``."""
    own = urlsplit(url).netloc

    async def only_our_host(route: Route) -> None:
        if urlsplit(route.request.url).netloc == own:
            if served is not None:
                served.append(route.request.url)
            await route.continue_()
        else:
            if refused is not None:
                refused.append(route.request.url)
            await route.abort("internetdisconnected")

    await page.route("**/*", only_our_host)


def csp_violations(page: Page, found: list[str] | None = None) -> list[str]:
    """The console's Content-Security-Policy messages of ``page`` from now on, in ``found`` (a
    new list if not given), which is returned."""
    violations: list[str] = [] if found is None else found
    page.on(
        "console",
        lambda message: (
            violations.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    return violations
