"""Judges for the recorded property-assistant runs in runs.jsonl.

Run them with:  jurybox check examples/recorded/runs.jsonl --judge examples.recorded.judges:cascade
"""

from jurybox import Cascade, Context, Jury, Majority, Tier, judge
from jurybox.judges import contains, json_schema, tool_calls

OCCUPANCY = {
    "type": "object",
    "properties": {"listing": {"type": "string"}, "occupancy": {"type": "number", "minimum": 0, "maximum": 1}},
    "required": ["listing", "occupancy"],
}


@judge
def answers_in_english(ctx: Context) -> bool:
    return not any(word in ctx.output.lower() for word in ("désolé", "lo siento"))


@judge
def no_apology_loop(ctx: Context) -> bool:
    return ctx.output.lower().count("sorry") < 2


@judge(threshold=0.5)
def names_a_listing(ctx: Context) -> float:
    names = ("Beach House", "Mountain Cabin", "City Apartment")
    return sum(name in ctx.output for name in names) / len(names)


cascade = Cascade(
    Tier.reject_on_any_fail(tool_calls(["get_listing_details"], mode="subset"), name="tools"),
    Tier.reject_on_any_fail(json_schema(OCCUPANCY), contains("occupancy"), name="format"),
    Tier.final(Jury(answers_in_english, no_apology_loop, names_a_listing, voting=Majority()), name="quality"),
)
