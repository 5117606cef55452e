"""Saved plans and their tags.

Revision ID: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "plans",
        sa.Column("id", sa.String(26), primary_key=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("label", sa.String(200), nullable=False),
        sa.Column("request", sa.LargeBinary(), nullable=False),
        sa.Column("response", sa.LargeBinary(), nullable=False),
        sa.Column("pricebook_version", sa.String(100), nullable=False),
        sa.Column("pricebook_hash", sa.String(100), nullable=False),
        sa.Column("calibration_date", sa.String(40), nullable=False),
        sa.Column("fleetplan_version", sa.String(40), nullable=False),
        sa.Column("requester", sa.String(200), nullable=False),
        sa.Column("idempotency_key", sa.String(128), nullable=True, unique=True),
        sa.Column("document", sa.Text(), nullable=True),
    )
    op.create_index("ix_plans_created_at", "plans", ["created_at"])
    op.create_index("ix_plans_label", "plans", ["label"])
    op.create_table(
        "plan_tags",
        sa.Column("plan_id", sa.String(26), sa.ForeignKey("plans.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("tag", sa.String(64), primary_key=True),
        sa.Column("position", sa.Integer(), nullable=False),
    )
    op.create_index("ix_plan_tags_tag", "plan_tags", ["tag"])


def downgrade() -> None:
    op.drop_table("plan_tags")
    op.drop_table("plans")
