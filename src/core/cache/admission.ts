/**
 * The chance that a sample read while its tier is full is kept (evicting a random entry), in
 * both tiers. Every epoch reads its split once in a new random order; with a split larger than
 * the tier, keeping every new sample (evicting the oldest, the least recently used or a random
 * one) churns the tier through samples the epoch has just read and will not ask again, while
 * evicting those it will: simulated warm epochs with a fifth of the split stored hit 2% (oldest
 * out, as `bench cache` measured: 2.8%), 4.5% (random out), 16.5% with this chance (a fifth is
 * the most any policy gets without knowing the order); with half of the split stored 28% and
 * 47.5%. Not zero, so a full tier still turns over to the data asked for now (a new dataset, or
 * generation): at this chance, about two thirds of it in ten tier-sizes of misses.
 */
export const ADMIT_WHEN_FULL = 0.1;
