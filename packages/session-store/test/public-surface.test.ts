import { describe, expect, it } from "vitest";
import * as conformance from "../src/conformance/index.js";
import * as api from "../src/index.js";

describe("the public surface of @podkit/session-store", () => {
  it("exports what a user of the store calls and none of the internals", () => {
    expect(Object.keys(api).sort()).toEqual([
      "AppendFailedError",
      "ApprovalAlreadyAnsweredError",
      "ApprovalAnswerInputSchema",
      "ApprovalDelegatedError",
      "ApprovalNotFoundError",
      "ApprovalNotPendingError",
      "BlobCorruptError",
      "CorruptEntryError",
      "DEFAULT_BLOB_GRACE_MS",
      "ERROR_KINDS",
      "EntrySchema",
      "FINAL_OUTPUT_DOMAIN",
      "FORMAT_VERSION",
      "FsStore",
      "InvalidApprovalAnswerError",
      "InvalidEntryError",
      "LockTimeoutError",
      "MinimalItemSchema",
      "NotFoundError",
      "POLICY_DECISION_DOMAIN",
      "PolicyDecisionSchema",
      "ReplayError",
      "RunStatusSchema",
      "SessionBusyError",
      "SessionLog",
      "SessionStoreError",
      "SessionStoreUsageError",
      "UnsupportedFormatError",
      "ancestryOf",
      "answerApproval",
      "appendAsGuest",
      "approvalsAwaitedBy",
      "assertBlobDigest",
      "assertReadFrom",
      "blobDigest",
      "collectBlobGarbage",
      "createEntryCodec",
      "decisionOf",
      "descendantsOf",
      "describeSession",
      "entriesBeforeCorruption",
      "entriesThroughTurn",
      "intactView",
      "isAnswerable",
      "isBlobDigest",
      "isPendingApproval",
      "lineOf",
      "listApprovals",
      "listSessionRows",
      "localAnswerer",
      "nextAfterAnswer",
      "observeCommits",
      "parentOf",
      "parseApprovalAnswer",
      "readSessionLine",
      "readSessionTree",
      "readSessionView",
      "replay",
      "restoreSession",
      "rootSessionOf",
      "segmentOfFile",
      "sessionForest",
      "sessionHoldingCall",
      "sessionRow",
      "sessionsRoot",
      "summarizeEntries",
      "treeOf",
    ]);
    // Ids are made inside (SessionLog's `newId` option replaces them); the entry schema builder,
    // the file-system injection type, framing, locks and the replay fold stay internal.
    for (const internal of [
      "newId",
      "createEntrySchema",
      "frameLine",
      "acquireOrRenewLease",
      "ReplayFold",
      "startFold",
      "GroupCommit",
      "appendNow",
      "appendsNow",
      "appendEither",
      "FsBlobStore",
      "referencedDigests",
      "assertBlobBytes",
    ]) {
      expect(Object.keys(api)).not.toContain(internal);
    }
  });

  it("the conformance entry point exports the suites only", () => {
    expect(Object.keys(conformance).sort()).toEqual([
      "describeBlobStoreConformance",
      "describeStoreConformance",
    ]);
  });
});
