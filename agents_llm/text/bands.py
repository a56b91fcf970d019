"""How close two texts must be in meaning, per embedding, to count as the same claim (the grounding
band) or as about a topic (the relevance band): (floor, ceiling) of a cosine similarity. Read by the
reference judge, by the writer's grounding check and by the referee, so that all three draw the line
at one place."""

# (floor, ceiling) of the grounding similarity band per embedding, from the measurements in
# `agents_llm.judges.reference`'s docstring.
GROUNDING_BANDS = {"minilm": (0.3, 0.8), "hashing": (0.3, 0.7)}
# (floor, ceiling) of the relevance band: how close a text must be in meaning to the topic (a
# section), to a key term (a sentence) or to its own section (a title) to count as about it.
# MiniLM, measured on the validity suite's 12 topics: a good section against its own topic
# 0.34-0.72 (10th percentile 0.46), another topic's section 0.06-0.22; a section's own title
# 0.26-0.79, a junk title ("This is a new task that requires additional information.") at
# most 0.27. The hashing embedding shares stopwords with everything (another topic's section
# reaches 0.33, above the 10th percentile of the own topic, 0.12): its band sits above what
# stopwords give, so for it relevance is the word families of `text.terms`.
RELEVANCE_BANDS = {"minilm": (0.2, 0.4), "hashing": (0.5, 0.8)}
