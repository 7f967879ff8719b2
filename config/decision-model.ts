/** The structured-decision model: one rate for input tokens, output free. */
export const decisionModel = {
  id: "jev-latest",
  inputUsdPerMillion: "0.12",
  outputUsdPerMillion: "0",
  /** Resolved version reported in answers unless DECISION_MODEL_VERSION says otherwise. */
  defaultVersion: "jev-2026-11-01",
} as const;

export const decisionQuestionTypes = ["noul", "choice", "score"] as const;
export type DecisionQuestionType = (typeof decisionQuestionTypes)[number];

export const decisionLimits = {
  minQuestions: 1,
  maxQuestions: 32,
} as const;
