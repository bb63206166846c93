import assert from "node:assert/strict";
import { test } from "node:test";
import { sortTickets, ticketNumber } from "../src/tickets.js";

test("ticketNumber reads the number of a ticket id", () => {
  assert.equal(ticketNumber("TCK-42"), 42);
});

test("sortTickets orders by number", () => {
  const sorted = sortTickets([{ id: "TCK-10" }, { id: "TCK-2" }]);
  assert.deepEqual(
    sorted.map((t) => t.id),
    ["TCK-2", "TCK-10"],
  );
});
