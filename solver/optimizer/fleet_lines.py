"""A given fleet's lines (EvaluateFleet) as the MIP's fixed groups of options.

A line names a GPU type, mode and count, and may name its server model and offer (as a plan's
fleet lines do). A line that names them pins those options; lines of one GPU type and mode that
name neither share every option the offer policy made eligible, so the MIP prices them with the
cheapest valid packing and offer mix (whole rental instances of each offer's size).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from pricebook import catalog
from pricebook.schema import Pricebook
from solver.domain import AcquisitionMode, Constraints, Fleet, FleetItem
from solver.errors import FieldViolation, InvalidRequest
from solver.optimizer.instance import FixedGroup
from solver.pricing.costs import offer_mode, offer_options
from solver.pricing.options import AcquisitionOption


def _named_offer_options(
    fleet: Fleet, options: list[AcquisitionOption], book: Pricebook, constraints: Constraints
) -> tuple[list[AcquisitionOption], list[FieldViolation]]:
    """``options`` plus those of the offers the fleet's lines name that the policy left out (a
    line may name any offer of its GPU and mode), and a violation for each line whose offer is
    unknown or of another GPU or mode."""
    extra: dict[str, AcquisitionOption] = {}
    problems = []
    for i, item in enumerate(fleet.items):
        if item.offer is None or any(o.offer_id == item.offer for o in options):
            continue
        offer = next((o for o in book.offers if o.id == item.offer), None)
        reason = ""
        if offer is None:
            reason = f"unknown offer {item.offer!r} (not in the pricebook); see `fleetplan catalog`"
        elif offer.gpu != item.gpu or offer_mode(offer) is not item.mode:
            reason = (
                f"offer {offer.id} is a {offer.kind.value} offer for {offer.gpu}, "
                f"not {item.mode.value} {item.gpu}"
            )
        if reason:
            problems.append(FieldViolation(f"fleet.items[{i}].offer", reason))
            continue
        assert offer is not None
        extra.update((o.id, o) for o in offer_options(offer, book, constraints))
    return [*options, *extra.values()], problems


def fixed_fleet(
    fleet: Fleet, options: list[AcquisitionOption], book: Pricebook, constraints: Constraints
) -> tuple[list[AcquisitionOption], tuple[FixedGroup, ...]]:
    """Fleet lines → groups of options the MIP places them among: a line naming its server model
    or offer pins those options; lines of one GPU type and mode naming neither share all its
    options, so the MIP finds the cheapest valid packing and offer mix. A line no option matches,
    or whose count no mix of whole rental instances makes, is refused, naming it."""
    options, problems = _named_offer_options(fleet, options, book, constraints)
    rental_only = catalog.rental_only_ids(book)
    problems += [
        FieldViolation(f"fleet.items[{i}].owned", f"{item.gpu} {catalog.OWNED_RENTAL_ONLY}")
        for i, item in enumerate(fleet.items)
        if item.owned and item.gpu in rental_only
    ]
    groups: dict[tuple[str, ...], int] = defaultdict(int)
    for i, item in enumerate(fleet.items):
        if any(p.field.startswith(f"fleet.items[{i}]") for p in problems):
            continue
        matching = tuple(sorted(o.id for o in options if _line_matches(item, o)))
        if not matching:
            what = "owned" if item.owned else item.mode.value
            where = f" in {item.server}" if item.server else ""
            reason = f"the pricebook has no {what} offer for {item.gpu}{where}"
            problems.append(FieldViolation(f"fleet.items[{i}]", reason))
            continue
        units = sorted({o.rental_instance_gpus for o in options if o.id in matching})
        if item.mode is not AcquisitionMode.BUY and not item.owned and not whole_instances(item.count, units):
            offers = ", ".join(sorted({o.offer_id for o in options if o.id in matching}))
            sizes = " or ".join(f"{u}-GPU" for u in units)
            whole = f"a multiple of {units[0]}" if len(units) == 1 else "a sum of them"
            reason = (
                f"{item.gpu} {item.mode.value} ({offers}) rents whole {sizes} instances: "
                f"{item.count} is not {whole}"
            )
            problems.append(FieldViolation(f"fleet.items[{i}].count", reason))
            continue
        groups[matching] += item.count
    if problems:
        raise InvalidRequest(problems)
    kept = [o for o in options if any(o.id in ids for ids in groups)]
    return kept, tuple(FixedGroup(ids, count) for ids, count in groups.items())


def _line_matches(item: FleetItem, option: AcquisitionOption) -> bool:
    """``option`` may hold GPUs of the fleet line ``item``."""
    return (
        option.gpu == item.gpu
        and option.owned == item.owned
        and (item.owned or option.mode is item.mode)
        and (item.server is None or option.server_id == item.server)
        and (item.offer is None or option.offer_id == item.offer)
    )


def whole_instances(count: int, units: Iterable[int]) -> bool:
    """``count`` GPUs are some whole instances of these sizes (a sum of multiples of them)."""
    sizes = sorted({max(1, u) for u in units})
    if not sizes:
        return False
    if sizes[0] == 1:
        return True
    reachable = bytearray(count + 1)
    reachable[0] = 1
    for n in range(1, count + 1):
        reachable[n] = any(n >= u and reachable[n - u] for u in sizes)
    return bool(reachable[count])
