"""Acquisition options: what capacity costs, in the request's currency.

The contract between the economics (which prices things) and the optimizer (which chooses how
many). One option = one way to get GPUs of one type: buy them in a given server model, reserve
them, or rent them on demand. The optimizer chooses integer GPUs ``n`` and, for purchases,
integer servers ``s`` with ``n <= gpus_per_server * s`` (``n == gpus_per_server * s`` when the
server is a fixed board such as an 8-GPU HGX). All money is a float in the request's currency
(converted with the dated FX rate); reports use Decimal ``Money``.
"""

from __future__ import annotations

from dataclasses import dataclass

from pricebook.schema import GpuId, OfferId, PriceLabel, ServerId
from solver.domain import AcquisitionMode
from solver.pricing.discounting import discount_factor, lease_payments_by_year

OptionId = str

MULTI_NODE_SERVERS = 2
"""Servers of one option from which they are networked into a scale-out fabric: one server needs no
switch (its GPUs talk over NVLink/PCIe), two or more are multi-node (docs/economics.md)."""


@dataclass(frozen=True, slots=True)
class AcquisitionOption:
    id: OptionId
    """Stable and readable, e.g. ``h200-sxm/buy/hgx-h200-8gpu``."""
    gpu: GpuId
    mode: AcquisitionMode
    offer_id: OfferId
    server_id: ServerId | None
    """The server model GPUs of a purchase live in; None for rentals."""
    gpus_per_server: int
    """GPU slots per server (rentals: the instance size used for TP domains)."""
    server_must_be_full: bool
    """Fixed boards (HGX, OAM UBB) come fully populated: GPUs = gpus_per_server × servers."""
    scale_up_domain_size: int
    """Largest TP group that stays inside one NVLink/P2P domain of this option."""
    capex_per_gpu: float
    """Up-front price of one GPU (0 for rentals and already-owned GPUs)."""
    capex_per_server: float
    """Up-front price of one server's host (chassis, CPUs, NICs); 0 for rentals."""
    residual_fraction: float
    """Share of capex recovered at the end of the horizon (reduces TCO)."""
    fixed_monthly_per_gpu: float
    """Paid every month per GPU whether busy or not: support, reserved rental, idle power."""
    fixed_monthly_per_server: float
    """Paid every month per server: colocation (rack units), host power, host support."""
    busy_hourly_per_gpu: float
    """Paid per GPU-hour actually used: on-demand rental, plus busy power above idle for owned GPUs."""
    power_kw_per_gpu: float
    """Wall power of one busy GPU, with PUE (for the power cap)."""
    power_kw_per_server: float
    """Wall power of one server's host, with PUE."""
    rack_units_per_server: float
    owned: bool = False
    """Already owned: capex is sunk (0), residual not counted."""
    colocation_monthly_per_server: float = 0.0
    """Part of ``fixed_monthly_per_server`` that is rack rent (for the TCO breakdown)."""
    host_power_monthly_per_server: float = 0.0
    """Part of ``fixed_monthly_per_server`` that is the host's always-on power; the rest is support."""
    idle_power_monthly_per_gpu: float = 0.0
    """Part of ``fixed_monthly_per_gpu`` that is the GPU's idle draw (on-site GPUs); the rest is
    colocation (``colocation_monthly_per_gpu``) and support (bought/owned) or rent (reserved)."""
    colocation_monthly_per_gpu: float = 0.0
    """Part of ``fixed_monthly_per_gpu`` that is colocation priced on the GPU's power (per-kW basis)."""
    rental_instance_gpus: int = 1
    """Rentals: GPUs per rented instance; the plan rents whole instances (a multiple of this)."""
    provider: str = ""
    """Who sells or rents it (the offer's provider; empty for owned GPUs without a current offer)."""
    price_label: PriceLabel | None = None
    """How reliable the offer's price is (quote, list, street, derived, estimate)."""
    network_capex_per_server: float = 0.0
    """Scale-out fabric per server (switch ports, optics, NICs not in the host price), paid only when
    the plan buys at least ``MULTI_NODE_SERVERS`` servers of this option (``network_capex``)."""
    installation_capex_per_gpu: float = 0.0
    """One-off installation/integration per GPU bought (the request's fraction of its price)."""
    installation_capex_per_server: float = 0.0
    """One-off installation/integration per server bought (fraction of the host + per-server fee)."""
    software_monthly_per_gpu: float = 0.0
    """Part of ``fixed_monthly_per_gpu`` that is software licences (per GPU-year ÷ 12)."""
    software_hourly_per_gpu: float = 0.0
    """Part of ``busy_hourly_per_gpu`` that is software licences (on-demand: per GPU-year ÷ 8,760 h)."""
    lease_payments_per_server: tuple[float, ...] = ()
    """A lease (a BUY option without capex): what one server's lease pays in each plan year of the
    horizon (``solver.pricing.discounting.lease_payments_by_year``), each to the minor unit."""
    lease_monthly_per_server: float = 0.0
    """A lease's instalment per server and month (counted in the monthly opex cap)."""
    lease_value_per_server: float = 0.0
    """A lease's cash price per server: the hardware's market value at the horizon is this ×
    ``residual_fraction`` (it is owned after the buy-out)."""
    lease_term_months: int = 0
    """A lease's term (its instalments are paid this many months, then the buy-out)."""
    lease_buyout_per_server: float = 0.0
    """A lease's buy-out per server, paid when its term ends."""
    lease_minor_digits: int = 2
    """Decimals of the request's currency: each plan year's lease payment is rounded to them."""

    def lease_payments_over(self, horizon_months: int, start_month: int = 0) -> tuple[float, ...]:
        """One server's lease taken at ``start_month`` of a ``horizon_months`` plan: its payments per
        plan year of the plan (``discounting.lease_payments_by_year``), each to the minor unit."""
        by_year = lease_payments_by_year(
            self.lease_monthly_per_server,
            self.lease_term_months,
            self.lease_buyout_per_server,
            horizon_months,
            start_month,
        )
        return tuple(round(amount, self.lease_minor_digits) for amount in by_year)

    @property
    def monthly_per_server(self) -> float:
        """Paid every month per server, lease instalments included (the monthly opex cap's share)."""
        return self.fixed_monthly_per_server + self.lease_monthly_per_server

    @property
    def leased(self) -> bool:
        return bool(self.lease_payments_per_server)

    def lease_total(self, servers: int) -> float:
        """Every payment of ``servers`` servers' leases (instalments and buy-out), undiscounted."""
        return sum(self.lease_payments_per_server) * servers

    def lease_cost(self, servers: int, rate: float) -> float:
        """The leases' payments in today's money at ``rate`` a year (each plan year's at its end)."""
        if rate == 0:
            return self.lease_total(servers)
        return servers * sum(
            amount * discount_factor(rate, year)
            for year, amount in enumerate(self.lease_payments_per_server, start=1)
        )

    @property
    def support_monthly_per_gpu(self) -> float:
        """Support (bought/owned) or rent (reserved) per GPU: fixed monthly less power, colocation and
        software."""
        return (
            self.fixed_monthly_per_gpu
            - self.idle_power_monthly_per_gpu
            - self.colocation_monthly_per_gpu
            - self.software_monthly_per_gpu
        )

    def networked(self, servers: int) -> bool:
        """Whether ``servers`` servers of this option form a scale-out fabric (more than one node)."""
        return self.network_capex_per_server > 0 and servers >= MULTI_NODE_SERVERS

    def network_capex(self, servers: int) -> float:
        """The fabric of ``servers`` servers: ``network_capex_per_server`` each once multi-node, else 0."""
        return self.network_capex_per_server * servers if self.networked(servers) else 0.0

    def hardware_capex(self, gpus: int, servers: int) -> float:
        """GPUs and hosts: the part of the capex with a market value at the horizon."""
        return self.capex_per_gpu * gpus + self.capex_per_server * servers

    def installation_capex(self, gpus: int, servers: int) -> float:
        return self.installation_capex_per_gpu * gpus + self.installation_capex_per_server * servers

    def capex(self, gpus: int, servers: int) -> float:
        """Everything paid up front: hardware, fabric, installation."""
        return (
            self.hardware_capex(gpus, servers)
            + self.network_capex(servers)
            + self.installation_capex(gpus, servers)
        )

    def residual_value(self, gpus: int, servers: int) -> float:
        """Market value at the horizon: hardware only (fabric and installation resell for nothing),
        bought or leased (a lease is bought out by then)."""
        if self.owned:
            return 0.0
        hardware = self.hardware_capex(gpus, servers) + self.lease_value_per_server * servers
        return hardware * self.residual_fraction

    @property
    def capex_per_gpu_with_host(self) -> float:
        """Up-front price of one GPU plus its share of a full server's host and installation (not the
        fabric: a single server needs none)."""
        return (
            self.capex_per_gpu
            + self.installation_capex_per_gpu
            + (self.capex_per_server + self.installation_capex_per_server) / self.gpus_per_server
        )

    def horizon_cost(self, gpus: int, servers: int, horizon_months: int, busy_gpu_hours: float) -> float:
        """TCO of ``gpus`` GPUs in ``servers`` servers over the horizon, for the busy hours used."""
        fixed = (self.fixed_monthly_per_gpu * gpus + self.fixed_monthly_per_server * servers) * horizon_months
        return (
            self.capex(gpus, servers)
            + self.lease_total(servers)
            - self.residual_value(gpus, servers)
            + fixed
            + self.busy_hourly_per_gpu * busy_gpu_hours
        )
