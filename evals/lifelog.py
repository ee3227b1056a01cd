"""A multi-session life log, generated deterministically: fifteen months of one person's days told to the
planner (moves, trips, people, preferences that change, corrections, facts said once and asked months
later), and questions of each kind, each with the sentences that answer it.

    lifelog.generate(seed=26) -> LifeLog(said=[Said(day, text, key)...], questions=[Question(...)...])

Everything comes from the seed: which names, cities and values are used, which days things happen,
the filler of ordinary days around them. The same seed gives the same log on every machine, so the
figures in docs/memory.md can be reproduced; another seed gives another life with the same shape, to
check that a change did not fit one draw.

Question kinds: "single" (one fact, usually said once, months earlier), "multi-hop" (two facts joined
by a person: "where does my piano teacher live?"), "when" (the day of an event, the first or last of
several, or what happened in a named period), "changed" (the newer of two facts, or the older when
asked "before the move"), "follow-up" (a question whose "she" or "there" names someone from the turn
before) and "abstention" (never said: the answer is "you never told me"). Each sentence a question
needs carries a key; a question's evidence is a list of groups of keys, one group per fact it needs,
any sentence of a group being enough. Trade-off: the sentences are templates, cleaner than real talk;
real conversations (BFCL's set) are measured beside it.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

START, END = dt.date(2025, 9, 1), dt.date(2026, 11, 30)
ASKED = dt.date(2026, 12, 1)  # the day every question is asked (the test suite's today)
KINDS = ("single", "multi-hop", "when", "changed", "follow-up", "abstention")

WOMEN = ["Ana", "Priya", "Mei", "Sofia", "Ingrid", "Amara", "Lucia", "Hanna", "Yara", "Noor", "Elif", "Marta"]
MEN = ["Tomás", "Henk", "Rui", "Kofi", "Lars", "Omar", "Jonas", "Mateo", "Bram", "Idris", "Felix", "Sven"]
SURNAMES = ["Okafor", "Lindqvist", "Haverkamp", "Brandt", "Moreau", "Castillo", "Nakamura", "Petrov", "Aziz"]
CITIES = ["Lisbon", "Porto", "Zeist", "Leiden", "Ghent", "Bruges", "Kraków", "Bergen", "Seville", "Lyon", "Graz"]
JOBS = ["a nurse", "a carpenter", "an architect", "a pharmacist", "a bus driver", "a teacher", "a chef"]
PETS = ["Bram", "Pepper", "Miso", "Olive", "Biscuit", "Juno", "Tofu"]
FOODS = ["lentil soup", "sushi", "pierogi", "shakshuka", "ramen", "paella", "pad thai"]
HOBBIES = ["birdwatching", "pottery", "chess", "sailing", "salsa dancing", "beekeeping", "woodcarving"]


@dataclass(frozen=True)
class Said:
    """One sentence the user said on a day; key names the fact it states (None for an ordinary remark)."""

    day: dt.date
    text: str
    key: str | None = None


@dataclass(frozen=True)
class Question:
    """A question asked on ASKED, the sentences that answer it and the answers that count."""

    kind: str
    question: str
    evidence: list[list[str]]  # groups of keys; each group is one fact the answer needs
    answer: list[str]  # any of these in a reply is right (empty: the right answer is "I don't know")
    context: list[str] = field(default_factory=list)  # what the user said just before, in this conversation


@dataclass
class LifeLog:
    """The sentences in the order they were said, and the questions."""

    said: list[Said]
    questions: list[Question]


def _written(day: dt.date) -> list[str]:
    """A day as a reply may write it."""
    return [day.isoformat(), f"{day:%B} {day.day}", f"{day.day} {day:%B}", f"{day:%b} {day.day}", f"{day.day} {day:%b}"]


def _relative(day: dt.date, said: dt.date) -> str:
    """How someone says, on `said`, the day `day` (at most a week before it)."""
    gap = (said - day).days
    if gap == 0:
        return "today"
    if gap == 1:
        return "yesterday"
    if gap < 7:
        return f"on {day:%A}"
    return f"last {day:%A}"


class _Life:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.said: list[Said] = []
        self.questions: list[Question] = []
        women, men = self.rng.sample(WOMEN, len(WOMEN)), self.rng.sample(MEN, len(MEN))
        self.names = iter(w for pair in zip(women, men, strict=False) for w in pair)
        self.cities = iter(self.rng.sample(CITIES, len(CITIES)))

    def day(self, lo: dt.date = START, hi: dt.date = END) -> dt.date:
        return lo + dt.timedelta(days=self.rng.randrange((hi - lo).days + 1))

    def say(self, day: dt.date, text: str, key: str | None = None) -> None:
        self.said.append(Said(day, text, key))

    def ask(self, kind: str, question: str, evidence: list[list[str]], answer: list[str], context=()) -> None:
        self.questions.append(Question(kind, question, evidence, answer, list(context)))

    # -- people: "my piano teacher is X" (said once), "X lives in Y" (said another day): single and multi-hop

    def people(self) -> None:
        roles = [
            ("sister", "lives in", "Where does my sister live?", "city"),
            ("best friend", "works as", "What does my best friend do for a living?", "job"),
            ("piano teacher", "lives in", "In which town does my piano teacher live?", "city"),
            ("neighbour", "has a dog called", "What is my neighbour's dog called?", "pet"),
            ("manager", "loves", "What food does my manager love?", "food"),
            ("landlord", "took up", "What hobby did my landlord take up?", "hobby"),
            ("cousin", "moved to", "Which city did my cousin move to?", "city"),
            ("running buddy", "works as", "What is my running buddy's job?", "job"),
            ("physiotherapist", "has a cat called", "What is my physiotherapist's cat called?", "pet"),
            ("mentor", "took up", "What hobby has my mentor taken up?", "hobby"),
        ]
        pools = {"city": self.cities, "job": iter(self.rng.sample(JOBS, len(JOBS)) * 2)}
        pools |= {"pet": iter(self.rng.sample(PETS, len(PETS)) * 2), "food": iter(self.rng.sample(FOODS, len(FOODS)))}
        pools["hobby"] = iter(self.rng.sample(HOBBIES, len(HOBBIES)))
        self.person = {}
        for role, verb, question, pool in roles:
            name = next(self.names)
            value = next(pools[pool])
            self.person[role] = name
            a, b = sorted([self.day(), self.day()])
            self.say(
                a,
                self.rng.choice([f"My {role} is {name}.", f"{name} is my {role}.", f"My {role}, {name}, called."]),
                f"{role}:name",
            )
            self.say(b, f"{name} {verb} {value}.", f"{role}:{pool}")
            self.ask("single", f"What is my {role}'s name?", [[f"{role}:name"]], [name])
            self.ask(
                "multi-hop",
                question,
                [[f"{role}:name"], [f"{role}:{pool}"]],
                [value.removeprefix("a ").removeprefix("an ")],
            )
        self.remarks()

    def remarks(self) -> None:
        """Two people say something about the same thing; "what did she say about it?" needs the turn before."""
        topics = [  # (the thing, what each of two people said about it, the answer to the first)
            (
                "the bakery on the corner",
                ["sells the best rye bread in town", "closes early on Saturdays"],
                "rye bread",
            ),
            ("the museum", ["reopens in March after the renovation", "has free entry on Sunday mornings"], "March"),
            ("the ferry", ["is cancelled on Sundays in winter", "got a new electric boat"], "cancelled"),
            (
                "the concert hall",
                ["has cheap student tickets on Mondays", "is showing silent films"],
                "student tickets",
            ),
            ("the flat upstairs", ["is for rent from January", "has had a leaking roof for months"], "rent"),
        ]
        people = list(self.person.values())
        self.rng.shuffle(people)
        for i, (thing, what, answer) in enumerate(topics):
            for j, name in enumerate(people[2 * i : 2 * i + 2]):
                self.say(self.day(), f"{name} told me {thing} {what[j]}.", f"remark:{i}:{j}")
            name = people[2 * i]
            self.ask(
                "follow-up",
                f"What did {'she' if name in WOMEN else 'he'} tell me about {thing}?",
                [[f"remark:{i}:0"]],
                [answer],
                [self.rng.choice([f"I had lunch with {name} yesterday.", f"{name} called me this morning."])],
            )

    # -- facts said once, asked months later

    def once(self) -> None:
        r = self.rng
        code, locker, birthday = (
            r.randrange(1000, 9999),
            r.randrange(10, 99),
            f"{r.randrange(2, 28)} {r.choice(['March', 'July'])}",
        )
        blood, bakery = (
            r.choice(["O negative", "A positive", "B negative"]),
            r.choice(["Bakkerij de Vries", "Bakkerij Jansen"]),
        )
        car, book = (
            r.choice(["Toyota Yaris", "Skoda Fabia", "Kia Picanto"]),
            r.choice(["Piranesi", "The Overstory", "Middlemarch"]),
        )
        expires = r.choice(["June", "August"])
        facts = [  # (what was said, what is asked months later, the answers that count)
            ("I have Wednesday afternoons free for meetings.", "When am I free for meetings?", ["Wednesday"]),
            ("I'm allergic to penicillin.", "Which medicine am I allergic to?", ["penicillin"]),
            (f"My bike lock code is {code}.", "What is the code of my bike lock?", [str(code)]),
            (f"My blood type is {blood}.", "What is my blood type?", [blood]),
            (f"My niece's birthday is on {birthday}.", "When is my niece's birthday?", [birthday]),
            (f"My favourite bakery is {bakery} on Nieuwstraat.", "Which bakery do I like best?", [bakery]),
            (f"I drive a grey {car}.", "What car do I drive?", [car]),
            (f"The gym locker I rent is number {locker}.", "What number is my gym locker?", [str(locker)]),
            ("I prefer window seats on long flights.", "Where do I like to sit on a plane?", ["window"]),
            (f"I'm reading {book} at the moment.", "Which book was I reading?", [book]),
            ("I never eat breakfast before ten.", "When do I eat breakfast?", ["ten", "10"]),
            (f"My library card expires in {expires} 2027.", "When does my library card expire?", [expires]),
        ]
        for i, (text, question, answer) in enumerate(facts):
            self.say(self.day(START, START + dt.timedelta(days=200)), text, f"once:{i}")
            self.ask("single", question, [[f"once:{i}"]], answer)

    # -- events with days: when, first and last of several, what happened in a period

    def events(self) -> None:
        dentist = f"Dr. {self.rng.choice(SURNAMES)}"
        visits = sorted(self.day() for _ in range(4))
        for i, d in enumerate(visits):
            said = d + dt.timedelta(days=self.rng.choice([0, 1, 3]))
            self.say(said, f"I had a check-up at the dentist, {dentist}, {_relative(d, said)}.", f"dentist:{i}")
        self.ask("when", "When did I last see the dentist?", [["dentist:3"]], _written(visits[3]))
        self.ask("when", "When was my first dentist appointment?", [["dentist:0"]], _written(visits[0]))
        friend = self.person["best friend"]
        climbs = sorted(self.day(dt.date(2026, 1, 1)) for _ in range(5))
        for i, d in enumerate(climbs):
            said = d + dt.timedelta(days=self.rng.choice([0, 1, 2]))
            who = friend if i == 0 else self.rng.choice([friend, "colleagues", "my sister"])
            self.say(said, f"Went bouldering with {who} {_relative(d, said)}.", f"climb:{i}")
        self.ask("when", "The first time I went bouldering, who came with me?", [["climb:0"]], [friend])
        self.ask("when", "When did I last go bouldering?", [["climb:4"]], _written(climbs[4]))
        trips = [
            ("Oslo", "a data conference"),
            (self.rng.choice(["Vienna", "Dublin"]), "a wedding"),
            ("Tallinn", "a long weekend"),
        ]
        months = self.rng.sample(range(1, 12), len(trips))
        for (city, why), month in zip(trips, months, strict=True):
            year = 2026 if month <= 10 else 2025
            start = dt.date(year, month, self.rng.randrange(3, 22))
            before = start - dt.timedelta(days=self.rng.randrange(2, 6))
            self.say(before, f"I fly to {city} on {start:%A} for {why}.", f"trip:{city}")
            back = start + dt.timedelta(days=3)
            self.say(
                back + dt.timedelta(days=1), f"Got back from {city} yesterday; {why} was worth it.", f"trip:{city}"
            )
            self.ask("when", f"When did I go to {city}?", [[f"trip:{city}"]], [f"{start:%B}", *_written(start)])
            self.ask("when", f"Where did I travel in {start:%B} {start.year}?", [[f"trip:{city}"]], [city])
        for i, weeks in enumerate(sorted(self.rng.sample(range(2, 11), 3))):
            d = ASKED - dt.timedelta(days=7 * weeks + self.rng.randrange(-2, 3))
            who = next(self.names)
            self.say(d, f"Had dinner with {who} at the Ethiopian place tonight.", f"dinner:{i}")
            ago = ["two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"][weeks - 2]
            self.ask("when", f"Who did I have dinner with {ago} weeks ago?", [[f"dinner:{i}"]], [who])
        barber = self.rng.choice(["Kapsalon Noord", "Barbershop Hugo", "Salon Lotte"])
        cuts = sorted(self.day(dt.date(2025, 10, 1)) for _ in range(3))
        for i, d in enumerate(cuts):
            self.say(d, f"Got my hair cut at {barber} today, shorter than usual.", f"haircut:{i}")
        self.ask("when", "When did I last get a haircut?", [["haircut:2"]], _written(cuts[2]))
        band, venue = (
            self.rng.choice(["Khruangbin", "Fleet Foxes", "Big Thief"]),
            self.rng.choice(["Tivoli", "Paradiso"]),
        )
        gig = self.day(dt.date(2025, 10, 1), dt.date(2026, 8, 31))
        said = gig + dt.timedelta(days=self.rng.randrange(1, 6))
        self.say(said, f"Saw {band} live at {venue} {_relative(gig, said)}, what a night.", "gig")
        self.ask("when", f"Which band did I see live in {gig:%B} {gig.year}?", [["gig"]], [band])
        self.ask("when", f"When did I see {band}?", [["gig"]], [f"{gig:%B}", *_written(gig)])
        sister = self.person["sister"]
        self.say(dt.date(2025, 12, 27), f"We spent Christmas at {sister}'s place, the first without snow.", "xmas")
        self.ask("when", "Where did I spend Christmas in 2025?", [["xmas"]], [sister])

    # -- things that change: the newer holds; "before the move" asks the older

    def changes(self) -> None:
        old_city, new_city = "Rotterdam", "Utrecht"
        move = dt.date(2026, 4, self.rng.randrange(11, 26))
        self.say(
            self.day(START, dt.date(2025, 12, 31)), f"I live in {old_city}, in a flat near the harbour.", "home:old"
        )
        self.say(
            move - dt.timedelta(days=9),
            f"The move to {new_city} is on {move:%A} the {move.day}th, boxes everywhere.",
            "move",
        )
        self.say(
            move + dt.timedelta(days=6),
            f"First week in the new flat in {new_city}; the kitchen gets morning sun.",
            "home:new",
        )
        self.say(move - dt.timedelta(days=20), "After the move I want to repaint the kitchen green.", "after-move")
        self.ask("changed", "Where do I live now?", [["home:new"]], [new_city])
        self.ask("changed", "Where did I live before the move?", [["home:old"]], [old_city])
        self.ask("when", "When did I move house?", [["move"]], _written(move))
        self.ask("changed", "What was I going to do after the move?", [["after-move"]], ["repaint", "green"])
        job_old, job_new = "Norvik Logistics", self.rng.choice(["Bloomtide", "Hexa Foods"])
        switch = dt.date(2026, 7, 1)
        self.say(self.day(START, dt.date(2025, 11, 30)), f"I work as a data analyst at {job_old}.", "job:old")
        self.say(
            switch + dt.timedelta(days=2), f"Started my new job at {job_new} this week, mostly forecasting.", "job:new"
        )
        self.ask("changed", "Where do I work now?", [["job:new"]], [job_new])
        self.ask("changed", "Where did I work before my current job?", [["job:old"]], [job_old])
        self.say(self.day(START, dt.date(2025, 12, 31)), "I drink two cups of coffee every morning.", "coffee:old")
        self.say(
            self.day(dt.date(2026, 2, 1), dt.date(2026, 3, 1)),
            "I've given up coffee; it's green tea in the mornings now.",
            "coffee:new",
        )
        self.ask("changed", "What do I drink in the morning these days?", [["coffee:new"]], ["green tea", "tea"])
        colour_a, colour_b = self.rng.sample(["blue", "red", "green", "black"], 2)
        d = self.day(dt.date(2025, 10, 1), dt.date(2026, 5, 1))
        self.say(d, f"My bike is {colour_a}, with a basket on the front.", "bike:old")
        self.say(
            d + dt.timedelta(days=40),
            f"Correction: my bike is {colour_b}, not {colour_a}; I mixed it up with {self.person['sister']}'s.",
            "bike:new",
        )
        self.ask("changed", "What colour is my bike?", [["bike:new"]], [colour_b])
        gym_a, gym_b = "Basic-Fit", "Boulderhal Sterk"
        self.say(self.day(START, dt.date(2026, 3, 1)), f"My gym is {gym_a} on the Kanaalweg.", "gym:old")
        self.say(
            move + dt.timedelta(days=30), f"I cancelled {gym_a} and joined {gym_b}, closer to the new flat.", "gym:new"
        )
        self.ask("changed", "Which gym am I a member of now?", [["gym:new"]], [gym_b])
        self.ask("changed", "Which gym did I go to before the move?", [["gym:old"]], [gym_a])

    # -- never said

    def abstentions(self) -> None:
        for q in [
            "What is my brother's name?",
            "When did I go to Tokyo?",
            "What is my cat called?",
            "Which football team do I support?",
            "What is my daughter's school called?",
            "When did I last go skiing?",
            "What did my grandmother cook for my birthday?",
            "How much did my new laptop cost?",
        ]:
            self.ask("abstention", q, [], [])

    # -- ordinary days: what most of the log is

    def filler(self) -> None:
        people = list(self.person.values())
        remarks = [
            "Long day at work, mostly meetings about the {thing}.",
            "It rained all afternoon, so I stayed in and cooked {food}.",
            "Watched a documentary about {hobby} tonight.",
            "Need to buy {food} ingredients for the weekend.",
            "Bumped into {name} at the supermarket.",
            "The train was late again this morning.",
            "Spent the evening tidying the balcony.",
            "Had coffee with {name} after work.",
            "Worked from home; the {thing} deadline is close.",
            "Went for a long walk along the river.",
            "Called {name} to catch up, nothing special.",
            "Finally fixed the squeaky door in the hallway.",
            "Tried a new recipe for {food}, not bad.",
            "Slept badly, too much on my mind about the {thing}.",
            "Ordered a new phone case online.",
            "Read a few chapters before bed.",
        ]
        things = ["quarterly report", "budget review", "dashboard", "team offsite", "data migration", "hiring plan"]
        day = START
        while day <= END:
            if self.rng.random() < 0.55:
                for _ in range(self.rng.randrange(1, 4)):
                    text = self.rng.choice(remarks).format(
                        thing=self.rng.choice(things),
                        food=self.rng.choice(FOODS),
                        hobby=self.rng.choice(HOBBIES),
                        name=self.rng.choice(people),
                    )
                    self.say(day, text)
            day += dt.timedelta(days=1)


SEEDS = (26, 27, 28, 29, 30)  # five lives, as BFCL has five users


def generate(seed: int = 26) -> LifeLog:
    """The life log of this seed: every sentence in the order said, and the questions."""
    life = _Life(seed)
    life.people()
    life.once()
    life.events()
    life.changes()
    life.abstentions()
    life.filler()
    order = sorted(range(len(life.said)), key=lambda i: (life.said[i].day, i))
    said = [life.said[i] for i in order]
    keys = {s.key for s in said if s.key}
    for q in life.questions:  # every question's evidence was said
        assert all(k in keys for group in q.evidence for k in group), q
    return LifeLog(said, life.questions)
