"""payorch: one payment API over several providers, with a built-in sandbox simulator."""

from pkgutil import extend_path

__version__ = "0.1.0"

# payorch.client comes from its own distribution (payorch-client), which may sit in another
# sys.path entry than the server's package: payorch's subpackages are looked for in every entry.
__path__ = extend_path(__path__, __name__)
