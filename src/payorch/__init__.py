"""payorch: one payment API over several providers, with a built-in sandbox simulator."""

from pkgutil import extend_path

# The one place for the version: the package's metadata (pyproject.toml reads it), the client's
# distribution (clients/python), the OpenAPI document's info.version and `payorch --version`
# take it from here. CHANGELOG.md names each release and its commit; main between releases is
# the next one's .dev0.
__version__ = "0.2.0.dev0"

# payorch.client comes from its own distribution (payorch-client), which may sit in another
# sys.path entry than the server's package: payorch's subpackages are looked for in every entry.
__path__ = extend_path(__path__, __name__)
