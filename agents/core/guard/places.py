"""Places a customer-facing text may name, with the region tokens each lies in (docs/guard.md).

Country, US state and large-city names in the spelling people write, each mapped to the default
region tokens (agents.core.policy.DEFAULT_REGIONS) it belongs to; a place belongs to an incident
when the incident names it or one of its regions. Names that are also common words or first names
(Chad, Jordan, Georgia as a state and a country is kept, Nice and Reading are not) are left out:
a false stop costs a person's minute, a name matched in prose costs trust in the guard.
Plain data: no Django here.
"""

from __future__ import annotations

import pycountry

_EU = (
    "Austria", "Belgium", "Bulgaria", "Croatia", "Cyprus", "Czechia", "Czech Republic", "Denmark", "Estonia",
    "Finland", "France", "Germany", "Greece", "Hungary", "Ireland", "Italy", "Latvia", "Lithuania",
    "Luxembourg", "Malta", "Netherlands", "Poland", "Portugal", "Romania", "Slovakia", "Slovenia", "Spain",
    "Sweden", "Amsterdam", "Berlin", "Frankfurt", "Paris", "Madrid", "Milan", "Rome", "Dublin", "Stockholm",
    "Warsaw", "Vienna", "Brussels", "Munich", "Lisbon", "Copenhagen", "Helsinki", "Prague",
)
# Europe outside the EU: an "EU" region of a service usually serves them too.
_EUROPE = (
    "Switzerland", "Norway", "Iceland", "Liechtenstein", "Serbia", "Albania", "North Macedonia", "Montenegro",
    "Bosnia and Herzegovina", "Moldova", "Belarus", "Zurich", "Geneva", "Oslo",
)
_UK = ("England", "Scotland", "Wales", "Northern Ireland", "London", "Manchester", "Edinburgh")
_UA = ("Kyiv", "Kiev", "Kharkiv", "Lviv", "Odesa")
_MEA = (
    "Russia", "Turkey", "Israel", "Saudi Arabia", "United Arab Emirates", "UAE", "Qatar", "Kuwait", "Bahrain",
    "Oman", "Iran", "Iraq", "Syria", "Lebanon", "Egypt", "Morocco", "Algeria", "Tunisia", "Libya", "Nigeria",
    "Ghana", "Kenya", "Ethiopia", "Tanzania", "Uganda", "Rwanda", "South Africa", "Senegal", "Cameroon",
    "Angola", "Zimbabwe", "Zambia", "Botswana", "Namibia", "Mozambique", "Dubai", "Riyadh", "Tel Aviv",
    "Istanbul", "Moscow", "Cairo", "Lagos", "Nairobi", "Johannesburg", "Cape Town",
)
_APAC = (
    "China", "Japan", "South Korea", "Korea", "India", "Pakistan", "Bangladesh", "Sri Lanka", "Nepal",
    "Indonesia", "Malaysia", "Singapore", "Thailand", "Vietnam", "Philippines", "Cambodia", "Myanmar",
    "Taiwan", "Hong Kong", "Australia", "New Zealand", "Mongolia", "Kazakhstan", "Uzbekistan", "Tokyo",
    "Osaka", "Seoul", "Beijing", "Shanghai", "Shenzhen", "Mumbai", "Bangalore", "Bengaluru", "Delhi",
    "Chennai", "Hyderabad", "Jakarta", "Manila", "Bangkok", "Sydney", "Melbourne", "Auckland", "Taipei",
)
_LATAM = (
    "Mexico", "Brazil", "Argentina", "Chile", "Colombia", "Peru", "Venezuela", "Ecuador", "Bolivia",
    "Paraguay", "Uruguay", "Guatemala", "Honduras", "El Salvador", "Nicaragua", "Costa Rica", "Panama",
    "Cuba", "Dominican Republic", "Puerto Rico", "Jamaica", "Haiti", "Mexico City", "Sao Paulo", "São Paulo",
    "Rio de Janeiro", "Buenos Aires", "Santiago", "Bogota", "Bogotá", "Lima",
)
_US = (
    "Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Connecticut", "Delaware",
    "Florida", "Hawaii", "Idaho", "Illinois", "Indiana", "Iowa", "Kansas", "Kentucky", "Louisiana", "Maine",
    "Maryland", "Massachusetts", "Michigan", "Minnesota", "Mississippi", "Missouri", "Montana", "Nebraska",
    "Nevada", "New Hampshire", "New Jersey", "New Mexico", "New York", "North Carolina", "North Dakota",
    "Ohio", "Oklahoma", "Oregon", "Pennsylvania", "Rhode Island", "South Carolina", "South Dakota",
    "Tennessee", "Texas", "Utah", "Vermont", "Virginia", "West Virginia", "Wisconsin", "Wyoming",
    "Washington", "Chicago", "Los Angeles", "San Francisco", "Seattle", "Boston", "Atlanta", "Dallas",
    "Houston", "Miami", "Denver",
)
_CANADA = ("Canada", "Toronto", "Montreal", "Vancouver", "Ottawa", "Ontario", "Quebec", "Alberta",
           "British Columbia")

# Countries that services commonly run as regions of their own, by their two-letter codes: "Australia"
# on an AU incident is the incident's own place, as "Canada" is on a CA one.
_COUNTRY_REGIONS = {
    "Australia": "au", "Sydney": "au", "Melbourne": "au", "New Zealand": "nz", "Auckland": "nz",
    "Japan": "jp", "Tokyo": "jp", "Osaka": "jp", "Singapore": "sg", "Brazil": "br", "Sao Paulo": "br",
    "São Paulo": "br", "Rio de Janeiro": "br", "Mexico": "mx", "Mexico City": "mx", "Germany": "de",
    "Berlin": "de", "Frankfurt": "de", "Munich": "de", "France": "fr", "Paris": "fr",
}
# What people of a country are called, and its adjective: a name of the place too ("Canadian accounts").
DEMONYMS = {
    "Canada": "Canadian", "Australia": "Australian", "New Zealand": "New Zealander", "Japan": "Japanese",
    "Singapore": "Singaporean", "Brazil": "Brazilian", "Mexico": "Mexican", "Germany": "German",
    "France": "French", "India": "Indian", "Ireland": "Irish", "Spain": "Spanish", "Italy": "Italian",
    "Netherlands": "Dutch", "England": "English", "Scotland": "Scottish", "Wales": "Welsh",
}

PLACES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(_EU + _EUROPE, ("eu", "emea")),
    **dict.fromkeys(_UK, ("uk", "emea")),
    **dict.fromkeys(_UA, ("ua", "emea")),
    **dict.fromkeys(_MEA, ("emea",)),
    **dict.fromkeys(_APAC, ("apac",)),
    **dict.fromkeys(_LATAM, ("latam",)),
    **dict.fromkeys(_US, ("us",)),
    **dict.fromkeys(_CANADA, ("ca",)),
    "Georgia": ("us", "emea"),
}
PLACES.update((place, (*PLACES[place], code)) for place, code in _COUNTRY_REGIONS.items())

# Every country is also the region its ISO 3166 code names, as services and status pages write them
# ("IE", "NL", "BE"): "Ireland" on a UK, IE incident is the incident's own place, and so are its cities.
_CITY_COUNTRY = {
    "Amsterdam": "Netherlands", "Dublin": "Ireland", "Madrid": "Spain", "Milan": "Italy", "Rome": "Italy",
    "Stockholm": "Sweden", "Warsaw": "Poland", "Vienna": "Austria", "Brussels": "Belgium", "Lisbon": "Portugal",
    "Copenhagen": "Denmark", "Helsinki": "Finland", "Prague": "Czechia", "Zurich": "Switzerland",
    "Geneva": "Switzerland", "Oslo": "Norway", "Kyiv": "Ukraine", "Kiev": "Ukraine", "Kharkiv": "Ukraine",
    "Lviv": "Ukraine", "Odesa": "Ukraine", "Dubai": "United Arab Emirates", "Riyadh": "Saudi Arabia",
    "Tel Aviv": "Israel", "Istanbul": "Türkiye", "Moscow": "Russian Federation", "Cairo": "Egypt",
    "Lagos": "Nigeria", "Nairobi": "Kenya", "Johannesburg": "South Africa", "Cape Town": "South Africa",
    "Seoul": "South Korea", "Beijing": "China", "Shanghai": "China", "Shenzhen": "China", "Mumbai": "India",
    "Bangalore": "India", "Bengaluru": "India", "Delhi": "India", "Chennai": "India", "Hyderabad": "India",
    "Jakarta": "Indonesia", "Manila": "Philippines", "Bangkok": "Thailand", "Taipei": "Taiwan",
    "Buenos Aires": "Argentina", "Santiago": "Chile", "Bogota": "Colombia", "Bogotá": "Colombia", "Lima": "Peru",
    "Toronto": "Canada", "Montreal": "Canada", "Vancouver": "Canada", "Ottawa": "Canada",
}
# Names the ISO list spells otherwise.
_ISO_NAMES = {"UAE": "United Arab Emirates", "Turkey": "Türkiye", "Russia": "Russian Federation",
              "Korea": "South Korea"}


def _country_code(name: str) -> str | None:
    try:
        return pycountry.countries.lookup(_ISO_NAMES.get(name, name)).alpha_2.lower()
    except LookupError:
        return None


for _place in list(PLACES):
    _code = _country_code(_CITY_COUNTRY.get(_place, _place))
    if _code and _code not in PLACES[_place]:
        PLACES[_place] = (*PLACES[_place], _code)

# Groups of countries people name together ("users in the Nordics"): each lies in its members' regions.
_GROUPS = {
    "Nordics": ("dk", "fi", "is", "no", "se"), "Nordic countries": ("dk", "fi", "is", "no", "se"),
    "Scandinavia": ("dk", "no", "se"), "Benelux": ("be", "lu", "nl"), "Baltics": ("ee", "lt", "lv"),
    "Baltic states": ("ee", "lt", "lv"), "DACH": ("at", "ch", "de"),
}
PLACES.update((group, ("eu", "emea", *codes)) for group, codes in _GROUPS.items())

# The places that are countries (a state or a city lies inside one).
COUNTRIES = frozenset(place for place in PLACES if place not in _CITY_COUNTRY and _country_code(place)) - {"Georgia"}
