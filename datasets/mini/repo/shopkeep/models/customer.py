"""Customers and their postal addresses."""

from dataclasses import asdict, dataclass, field

from ..errors import ValidationError
from ..utils.dates import parse_date
from ..utils.text import mask_email
from ..utils.validation import validate_email, validate_postal_code
from .base import Entity

DOMESTIC_COUNTRY = "US"


@dataclass(frozen=True)
class Address:
    """A postal address; the postal code is validated per country."""

    line1: str
    city: str
    postal_code: str
    country: str = DOMESTIC_COUNTRY
    line2: str = ""
    region: str = ""
    recipient: str = field(default="", compare=False)

    def __post_init__(self):
        if not self.line1.strip():
            raise ValidationError("line1", "must not be empty")
        country = self.country.strip().upper()
        if len(country) != 2:
            raise ValidationError("country", "use a two-letter ISO code")
        object.__setattr__(self, "country", country)
        object.__setattr__(self, "postal_code",
                           validate_postal_code(self.postal_code, country))

    @property
    def is_domestic(self):
        return self.country == DOMESTIC_COUNTRY

    def format(self):
        """Multi-line label as printed on a parcel."""
        lines = [self.recipient, self.line1, self.line2]
        locality = " ".join(part for part in (self.city, self.region, self.postal_code) if part)
        lines.append(locality)
        if not self.is_domestic:
            lines.append(self.country)
        return "\n".join(line for line in lines if line)

    def to_dict(self):
        return asdict(self)

    @classmethod
    def from_dict(cls, data):
        return cls(**data)


class Customer(Entity):
    """A registered customer."""

    id_prefix = "cus"

    def __init__(self, email, name, *, id=None, member_since=None, addresses=(),
                 tax_exempt=False, marketing_opt_in=False):
        super().__init__(id)
        self.email = validate_email(email)
        self.name = name.strip()
        self.member_since = parse_date(member_since) if member_since else None
        self.addresses = list(addresses)
        self.tax_exempt = tax_exempt
        self.marketing_opt_in = marketing_opt_in

    @property
    def display_name(self):
        return self.name or mask_email(self.email)

    @property
    def default_address(self):
        return self.addresses[0] if self.addresses else None

    def add_address(self, address, default=False):
        if address in self.addresses:
            self.addresses.remove(address)
        if default:
            self.addresses.insert(0, address)
        else:
            self.addresses.append(address)

    def to_dict(self):
        return {
            "id": self.id,
            "email": self.email,
            "name": self.name,
            "member_since": self.member_since.isoformat() if self.member_since else None,
            "addresses": [address.to_dict() for address in self.addresses],
            "tax_exempt": self.tax_exempt,
            "marketing_opt_in": self.marketing_opt_in,
        }

    @classmethod
    def from_dict(cls, data):
        return cls(
            data["email"],
            data["name"],
            id=data.get("id"),
            member_since=data.get("member_since"),
            addresses=[Address.from_dict(item) for item in data.get("addresses", ())],
            tax_exempt=data.get("tax_exempt", False),
            marketing_opt_in=data.get("marketing_opt_in", False),
        )
