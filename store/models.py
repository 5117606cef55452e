"""The tables (SQLAlchemy 2 typed ORM). Changing them needs a migration in ``migrations/versions``
(a test checks the migrated schema matches these models)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, Index, LargeBinary, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from store.records import MAX_KEY_CHARS, MAX_LABEL_CHARS, MAX_TAG_CHARS


class Base(DeclarativeBase):
    pass


class PlanRow(Base):
    __tablename__ = "plans"

    id: Mapped[str] = mapped_column(String(26), primary_key=True)
    """ULID: sorting by id is sorting by creation."""
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    label: Mapped[str] = mapped_column(String(MAX_LABEL_CHARS), default="", index=True)
    request: Mapped[bytes] = mapped_column(LargeBinary)
    response: Mapped[bytes] = mapped_column(LargeBinary)
    pricebook_version: Mapped[str] = mapped_column(String(100), default="")
    pricebook_hash: Mapped[str] = mapped_column(String(100), default="")
    calibration_date: Mapped[str] = mapped_column(String(40), default="")
    fleetplan_version: Mapped[str] = mapped_column(String(40), default="")
    requester: Mapped[str] = mapped_column(String(200), default="")
    idempotency_key: Mapped[str | None] = mapped_column(String(MAX_KEY_CHARS), unique=True)
    document: Mapped[str | None] = mapped_column(Text)
    tags: Mapped[list[TagRow]] = relationship(
        back_populates="plan", cascade="all, delete-orphan", order_by="TagRow.position", lazy="selectin"
    )


class TagRow(Base):
    __tablename__ = "plan_tags"
    __table_args__ = (Index("ix_plan_tags_tag", "tag"),)

    plan_id: Mapped[str] = mapped_column(ForeignKey("plans.id", ondelete="CASCADE"), primary_key=True)
    tag: Mapped[str] = mapped_column(String(MAX_TAG_CHARS), primary_key=True)
    position: Mapped[int] = mapped_column(default=0)
    """Order the caller gave the tags in."""
    plan: Mapped[PlanRow] = relationship(back_populates="tags")
