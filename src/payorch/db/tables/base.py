from datetime import datetime

from sqlalchemy import Column, ForeignKey, MetaData, String

from payorch.db.types import UtcDateTime

# Named constraints, so migrations can refer to them on both databases.
metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)


# The columns most tables share, written once (each call makes a new Column: a Column belongs
# to one table).
def id_column() -> Column[str]:
    return Column("id", String(40), primary_key=True)


def reference(
    name: str, table: str, *, index: bool | None = None, unique: bool | None = None
) -> Column[str]:
    """A required reference to ``table``'s id."""
    return Column(name, String(40), ForeignKey(f"{table}.id"), nullable=False, index=index, unique=unique)


def timestamp(name: str, *, nullable: bool = False) -> Column[datetime]:
    return Column(name, UtcDateTime, nullable=nullable)
