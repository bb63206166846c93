export * from "./item.js";
