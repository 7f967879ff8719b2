/**
 * The decision model's version reported in answers unless DECISION_MODEL_VERSION (or the provider's answer) says
 * otherwise; the model itself, its price and providers are the catalog's (config/catalog).
 */
export const DEFAULT_DECISION_MODEL_VERSION = "jev-2026-11-01";

export const decisionQuestionTypes = ["noul", "choice", "score"] as const;
export type DecisionQuestionType = (typeof decisionQuestionTypes)[number];

export const decisionLimits = {
  minQuestions: 1,
  maxQuestions: 32,
} as const;
