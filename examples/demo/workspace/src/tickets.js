/** Parses a ticket id like "TCK-42" into its number. */
export function ticketNumber(id) {
  // TODO: reject ids that do not start with "TCK-" instead of returning NaN
  return Number(id.slice(4));
}

/** Sorts tickets by number, oldest first. */
export function sortTickets(tickets) {
  return [...tickets].sort((a, b) => ticketNumber(a.id) - ticketNumber(b.id));
}
