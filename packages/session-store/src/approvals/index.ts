export {
  type ApprovalAnswerInput,
  answerApproval,
  isPendingApproval,
  localAnswerer,
} from "./answer-approval.js";
export {
  ApprovalAlreadyAnsweredError,
  ApprovalNotFoundError,
  ApprovalNotPendingError,
  InvalidApprovalAnswerError,
} from "./approval-errors.js";
export { type ApprovalListing, listApprovals, type SessionApprovals } from "./list-approvals.js";
