export {
  type ApprovalAnswerInput,
  ApprovalAnswerInputSchema,
  answerApproval,
  isAnswerable,
  isPendingApproval,
  localAnswerer,
  parseApprovalAnswer,
} from "./answer-approval.js";
export {
  ApprovalAlreadyAnsweredError,
  ApprovalDelegatedError,
  ApprovalNotFoundError,
  ApprovalNotPendingError,
  InvalidApprovalAnswerError,
} from "./approval-errors.js";
export { type ApprovalListing, listApprovals, type SessionApprovals } from "./list-approvals.js";
