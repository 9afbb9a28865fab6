#!/usr/bin/env python3
"""Writes census.json and the race predicate matrices of the census example.

The person table follows the public definitions of the 2010 Census Summary
File 1 and the PL 94-171 redistricting file (U.S. Census Bureau technical
documentation): sex (2) x Hispanic or Latino origin (2) x race (64) x
relationship to householder (17) x age in single years 0..114 (115),
500,480 cells. Race is the six OMB race flags (White, Black or African
American, American Indian and Alaska Native, Asian, Native Hawaiian and
Other Pacific Islander, Some Other Race) as a 6-bit code, value = sum of
2^k over the races marked; the census's 63 combinations are the values
1..63, and value 0 (no race marked) is kept so the domain is a product.
Run: python3 gen.py (from this directory).
"""
import json

RACES = ["white", "black", "aian", "asian", "nhpi", "other"]


def bits(v):
    return [k for k in range(6) if v >> k & 1]


def write_csv(name, rows):
    with open(name, "w") as f:
        f.write("# %s: %d queries over the 64 race codes (see gen.py)\n" % (name, len(rows)))
        for r in rows:
            f.write(",".join(str(x) for x in r) + "\n")


# The seven race categories of P3/P5/P12A-G: each race alone, two or more races.
race7 = [[1 if bits(v) == [k] else 0 for v in range(64)] for k in range(6)]
race7.append([1 if len(bits(v)) >= 2 else 0 for v in range(64)])
write_csv("race7.csv", race7)
# P6: race alone or in combination with one or more other races (rows overlap).
write_csv("race_combo6.csv", [[1 if k in bits(v) else 0 for v in range(64)] for k in range(6)])
# P8 totals by number of races: exactly 1, 2, ..., 6.
write_csv("race_count6.csv", [[1 if len(bits(v)) == c else 0 for v in range(64)] for c in range(1, 7)])
# White alone (P12I, P5's "white alone, not Hispanic" with hispanic = 0 below).
write_csv("white_alone.csv", [[1 if bits(v) == [0] else 0 for v in range(64)]])

# P12's 23 age groups (0-4, 5-9, 10-14, 15-17, 18-19, 20, 21, 22-24, 25-29, ...,
# 60-61, 62-64, 65-66, 67-69, 70-74, 75-79, 80-84, 85+).
p12 = [[0, 4], [5, 9], [10, 14], [15, 17], [18, 19], [20, 20], [21, 21], [22, 24], [25, 29], [30, 34],
       [35, 39], [40, 44], [45, 49], [50, 54], [55, 59], [60, 61], [62, 64], [65, 66], [67, 69],
       [70, 74], [75, 79], [80, 84], [85, 114]]
# P14: single years under 20. PCT12: single years 0..99 and 100-104, 105-109, 110+.
p14 = [[a, a] for a in range(20)]
pct12 = [[a, a] for a in range(100)] + [[100, 104], [105, 109], [110, 114]]
adult = [[18, 114]]
p29 = [[0, 17], [18, 64], [65, 114]]

M = lambda f: {"matrix": f}
R = lambda r: {"ranges": r}
terms = [
    ("P1_total", {}),
    ("P3_race", {"race": M("race7.csv")}),
    ("P4_hispanic", {"hispanic": "identity"}),
    ("P5_hispanic_by_race", {"hispanic": "identity", "race": M("race7.csv")}),
    ("P6_race_in_combination", {"race": M("race_combo6.csv")}),
    ("P8_number_of_races", {"race": M("race_count6.csv")}),
    ("P9_hispanic_by_number_of_races", {"hispanic": "identity", "race": M("race_count6.csv")}),
    ("P12_sex_by_age", {"sex": "identity", "age": R(p12)}),
    ("P12AG_sex_by_age_by_race", {"sex": "identity", "age": R(p12), "race": M("race7.csv")}),
    ("P12H_sex_by_age_hispanic", {"sex": "identity", "age": R(p12), "hispanic": "identity"}),
    ("P12I_sex_by_age_white_alone_by_hispanic", {"sex": "identity", "age": R(p12), "hispanic": "identity", "race": M("white_alone.csv")}),
    ("P14_sex_by_age_under_20", {"sex": "identity", "age": R(p14)}),
    ("PCT12_sex_by_single_year_of_age", {"sex": "identity", "age": R(pct12)}),
    ("PCT12AG_sex_by_age_by_race", {"sex": "identity", "age": R(pct12), "race": M("race7.csv")}),
    ("PCT12H_sex_by_age_hispanic", {"sex": "identity", "age": R(pct12), "hispanic": "identity"}),
    ("age_cumulative", {"age": "prefix"}),
    ("sex_by_age_cumulative", {"sex": "identity", "age": "prefix"}),
    ("P16_relationship_by_age", {"relationship": "identity", "age": R(p29)}),
    ("P29_relationship", {"relationship": "identity"}),
    ("P29_relationship_by_sex", {"relationship": "identity", "sex": "identity"}),
    ("P29AG_relationship_by_race", {"relationship": "identity", "race": M("race7.csv")}),
    ("P29H_relationship_by_hispanic", {"relationship": "identity", "hispanic": "identity"}),
    ("P32_relationship_under_18_by_age", {"relationship": "identity", "age": R(p14[:18])}),
    ("PL1_race", {"race": "identity"}),
    ("PL2_hispanic_by_race", {"hispanic": "identity", "race": "identity"}),
    ("PL3_voting_age_by_race", {"age": R(adult), "race": "identity"}),
    ("PL4_voting_age_by_hispanic_by_race", {"age": R(adult), "hispanic": "identity", "race": "identity"}),
    ("detailed_sex_hispanic_race_age_groups", {"sex": "identity", "hispanic": "identity", "race": M("race7.csv"), "age": R(p12)}),
    ("detailed_relationship_sex_age_groups", {"relationship": "identity", "sex": "identity", "age": R(p12)}),
    ("one_way_marginals", None),
]
workload = []
for name, prod in terms:
    if prod is None:
        workload.append({"name": name, "marginals": {"k": 1}})
    else:
        workload.append({"name": name, "product": prod})
spec = {
    "domain": [{"name": "sex", "size": 2}, {"name": "hispanic", "size": 2}, {"name": "race", "size": 64},
               {"name": "relationship", "size": 17}, {"name": "age", "size": 115}],
    "workload": workload,
}
with open("census.json", "w") as f:
    json.dump(spec, f, indent=1)
    f.write("\n")
