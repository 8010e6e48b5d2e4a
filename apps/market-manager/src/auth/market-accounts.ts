// The accounts the market makes for itself at its first start: its admin (the password is shown
// once, on the console) and the launcher's local Node worker. Their addresses are not real
// mailboxes, so no verification link is mailed to them.

export const ADMIN_EMAIL = "admin@cyclemarket.local";
export const LOCAL_WORKER_EMAIL = "local-worker@cyclemarket.local";

/** Whether this address is one of the market's own accounts (no mail goes to it). */
export const isMarketAccount = (email: string) => email === ADMIN_EMAIL || email === LOCAL_WORKER_EMAIL;
