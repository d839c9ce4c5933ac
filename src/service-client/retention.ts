/**
 * The service deletes a job's outputs 48 hours after it finishes (interface spec, "Outputs"): the
 * one figure behind every rule that depends on it (how far back import and the lost-ledger check
 * look, what counts as expired).
 */
export const OUTPUT_LIFETIME_MS = 48 * 60 * 60 * 1000;
