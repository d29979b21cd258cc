/**
 * Scheduling end to end in Chromium against a real server: staff set up a practitioner's schedule
 * (working hours → generated slots), book a free slot for a patient from the week calendar, drag
 * the appointment to another slot, move it again with the keyboard's "Move to…", cancel it and see
 * the slot free again; give the schedule a day off and see that day's slots turn unavailable; a
 * patient signed in as a patient books their own appointment and cancels it; both screens (and
 * the availability form) fit a phone, a tablet and a desktop with no serious axe violation.
 */
import { HearthClient, MemoryStorage, type Appointment, type Slot } from '@hearth/core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../server/src/test/app.js';
import { describeViolations, overflowsHorizontally, seriousViolations } from './axe.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumForSuite, ensureAppBuilt, screenshotDir } from './harness.js';

const ADMIN_EMAIL = 'admin@example.com';
const ADMIN_PASSWORD = 'correct-horse-battery-9';
const PATIENT_EMAIL = 'bea.patient@example.com';
const PATIENT_PASSWORD = 'patient-pass-phrase-42';

describe.runIf(chromiumForSuite())('scheduling in Chromium', () => {
  let server: TestApp;
  let browser: Browser;
  let page: Page;
  let patientContext: BrowserContext;
  let patientPage: Page;
  let api: HearthClient;
  let scheduleId = '';
  let beaId = '';
  const url = (path: string) => new URL(path, server.baseUrl).toString();

  async function signIn(p: Page, email: string, password: string) {
    await p.goto(url('/signin'));
    await p.getByLabel('Email').fill(email);
    await p.getByLabel('Password').fill(password);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.getByRole('heading', { name: /^Welcome/ }).waitFor();
  }

  const slotStatus = async (id: string) => ((await api.readResource('Slot', id, { cache: 'no-cache' })) as Slot).status;

  beforeAll(async () => {
    await ensureAppBuilt();
    server = await createTestApp({ listen: true, config: { adminEmail: ADMIN_EMAIL, adminPassword: ADMIN_PASSWORD } });
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 }, locale: 'en-US', timezoneId: 'UTC' });
    page.setDefaultTimeout(30_000);
    api = new HearthClient({ baseUrl: server.baseUrl, storage: new MemoryStorage() });
    await api.signInWithPassword({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    await api.createResource({ resourceType: 'Practitioner', name: [{ given: ['Grace'], family: 'Hopper' }] });
    await api.createResource({ resourceType: 'Patient', name: [{ given: ['Ada'], family: 'Lovelace' }] });
    const policy = await api.createResource({
      resourceType: 'AccessPolicy',
      name: 'Patient portal',
      resource: [
        { resourceType: 'Patient', compartment: { reference: '%patient' } },
        { resourceType: 'Appointment', compartment: { reference: '%patient' } },
        { resourceType: 'Slot', readonly: true },
        { resourceType: 'Schedule', readonly: true },
        { resourceType: 'Practitioner', readonly: true },
        { resourceType: 'Location', readonly: true },
      ],
    });
    const projectId = api.getProject()?.reference?.split('/')[1] as string;
    const member = await api.invite(projectId, {
      resourceType: 'Patient',
      firstName: 'Bea',
      lastName: 'Patient',
      email: PATIENT_EMAIL,
      password: PATIENT_PASSWORD,
      membership: { accessPolicy: { reference: `AccessPolicy/${policy.id}` } },
    });
    beaId = member.profile?.reference?.split('/')[1] as string;
    await signIn(page, ADMIN_EMAIL, ADMIN_PASSWORD);
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('sets up a schedule, books a slot, drags and moves it, cancels it and sees the slot free', async () => {
    await page.goto(url('/schedule'));
    await page.getByRole('button', { name: 'New schedule' }).click();
    const form = page.getByRole('form', { name: 'New schedule' });
    await form.getByRole('textbox', { name: 'Practitioner' }).fill('Hopper');
    await page.getByRole('option', { name: 'Grace Hopper' }).click();
    for (const day of ['Saturday', 'Sunday']) await form.getByRole('checkbox', { name: day }).check();
    await form.getByLabel('Starts at').fill('09:00');
    await form.getByLabel('Ends at').fill('12:00');
    await form.getByRole('textbox', { name: 'Weeks to open' }).fill('2');
    await form.getByRole('button', { name: 'Create schedule and slots' }).click();
    await page
      .getByRole('status')
      .getByText(/Created the schedule of Grace Hopper with \d+ slots/)
      .waitFor();
    scheduleId = new URL(page.url()).searchParams.get('schedule') as string;
    expect(scheduleId).toBeTruthy();
    // Next week lies wholly inside the two weeks opened: 7 days of six 30-minute slots.
    await page.getByRole('button', { name: 'Next week' }).click();
    const calendar = page.getByRole('region', { name: /^Schedule for the week of/ });
    const monday = calendar.getByRole('region').first();
    await monday.getByRole('button', { name: /^9:00 AM Free slot, / }).waitFor();
    expect(await calendar.getByRole('button', { name: /Free slot, / }).count()).toBe(42);

    // Book Monday 9:00 for Ada Lovelace.
    await monday.getByRole('button', { name: /^9:00 AM Free slot, / }).click();
    const book = page.getByRole('form', { name: 'Book the slot' });
    await book.getByRole('textbox', { name: 'Patient' }).fill('Lovelace');
    await page.getByRole('option', { name: 'Ada Lovelace' }).click();
    await book.getByRole('textbox', { name: 'Reason for visit' }).fill('Annual check-up');
    await book.getByRole('button', { name: 'Book' }).click();
    await page
      .getByRole('status')
      .getByText(/^Booked Ada Lovelace on /)
      .waitFor();
    const appointment = monday.getByRole('button', { name: /^Ada Lovelace.*9:00 AM–.*Booked/ });
    await appointment.waitFor();
    await page.screenshot({ path: `${screenshotDir}/scheduling-booked.png`, fullPage: true });
    let [booked] = (await api.searchResources(
      'Appointment',
      { status: 'booked' },
      { cache: 'no-cache' },
    )) as Appointment[];
    const firstSlot = booked.slot?.[0]?.reference?.split('/')[1] as string;
    expect(await slotStatus(firstSlot)).toBe('busy');
    expect(booked.description).toBe('Annual check-up');

    // Drag it to Tuesday 10:30.
    const tuesday = calendar.getByRole('region').nth(1);
    const target = tuesday.getByRole('button', { name: /^10:30 AM Free slot, / });
    const from = (await appointment.boundingBox())!;
    const to = (await target.boundingBox())!;
    await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
    await page.mouse.down();
    await page.mouse.move(from.x + from.width / 2 + 10, from.y + from.height / 2 + 10, { steps: 3 });
    await page.mouse.move(to.x + to.width / 2, to.y + to.height / 2, { steps: 12 });
    await page.mouse.up();
    await page
      .getByRole('status')
      .getByText(/^Moved Ada Lovelace to .*10:30 AM$/)
      .waitFor();
    const moved = tuesday.getByRole('button', { name: /^Ada Lovelace.*10:30 AM–.*Booked/ });
    await moved.waitFor();
    await monday.getByRole('button', { name: /^9:00 AM Free slot, / }).waitFor();
    expect(await slotStatus(firstSlot)).toBe('free');
    [booked] = (await api.searchResources('Appointment', { status: 'booked' }, { cache: 'no-cache' })) as Appointment[];
    const secondSlot = booked.slot?.[0]?.reference?.split('/')[1] as string;
    expect(secondSlot).not.toBe(firstSlot);
    expect(await slotStatus(secondSlot)).toBe('busy');

    // The keyboard way: open the appointment with Enter, "Move to…" Wednesday 11:00.
    await moved.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Ada Lovelace' });
    await dialog.getByRole('textbox', { name: 'Move to…' }).click();
    await page.getByRole('option', { name: /^Wednesday, .*11:00 AM$/ }).click();
    await dialog.getByRole('button', { name: 'Move', exact: true }).click();
    await page
      .getByRole('status')
      .getByText(/^Moved Ada Lovelace to Wednesday, .*11:00 AM$/)
      .waitFor();
    const wednesday = calendar.getByRole('region').nth(2);
    await wednesday.getByRole('button', { name: /^Ada Lovelace.*11:00 AM–.*Booked/ }).waitFor();
    expect(await slotStatus(secondSlot)).toBe('free');

    // Cancel it: the slot is free again on the calendar and on the server.
    await wednesday.getByRole('button', { name: /^Ada Lovelace/ }).click();
    await dialog.getByRole('textbox', { name: 'Reason for cancelling' }).fill('Patient called to cancel');
    await dialog.getByRole('button', { name: 'Cancel appointment' }).click();
    await page.getByRole('status').getByText('Cancelled the appointment of Ada Lovelace').waitFor();
    await wednesday.getByRole('button', { name: /^11:00 AM Free slot, / }).waitFor();
    expect(await calendar.getByRole('button', { name: /^Ada Lovelace/ }).count()).toBe(0);
    const cancelled = (await api.readResource('Appointment', booked.id as string, {
      cache: 'no-cache',
    })) as Appointment;
    expect(cancelled).toMatchObject({ status: 'cancelled', cancelationReason: { text: 'Patient called to cancel' } });
    const thirdSlot = cancelled.slot?.[0]?.reference?.split('/')[1] as string;
    expect(await slotStatus(thirdSlot)).toBe('free');
    expect(await calendar.getByRole('button', { name: /Free slot, / }).count()).toBe(42);
  }, 300_000);

  it('sets a day off on the schedule: its slots turn unavailable in place and cannot be booked', async () => {
    // Next week's Wednesday (the browser runs in UTC, weeks start on Monday).
    const today = new Date();
    const midnight = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate());
    const monday = midnight - ((today.getUTCDay() + 6) % 7) * 86_400_000 + 7 * 86_400_000;
    const wednesday = new Date(monday + 2 * 86_400_000).toISOString().slice(0, 10);
    const before = await api.searchResources(
      'Slot',
      { schedule: `Schedule/${scheduleId}`, _count: '1000' },
      { cache: 'no-cache' },
    );

    await page.goto(url(`/schedule?schedule=${scheduleId}`));
    await page.getByRole('button', { name: 'Edit availability' }).click();
    const form = page.getByRole('form', { name: 'Availability of the schedule' });
    // The form shows the schedule as it was set up.
    expect(await form.getByLabel('Ends at').inputValue()).toBe('12:00');
    await form.getByRole('button', { name: 'Add time off' }).click();
    const off = form.getByRole('group', { name: 'Time off 1' });
    await off.getByLabel('Reason').fill('Conference');
    await off.getByLabel('First day off').fill(wednesday);
    expect(await off.getByLabel('Last day off').inputValue()).toBe(wednesday);
    await form.getByRole('button', { name: 'Save and update slots' }).click();
    await page
      .getByRole('status')
      .getByText(/^Saved the availability of Grace Hopper: .*6 slots changed/)
      .waitFor();

    await page.getByRole('button', { name: 'Next week' }).click();
    const calendar = page.getByRole('region', { name: /^Schedule for the week of/ });
    const day = calendar.getByRole('region').nth(2);
    await day.getByText('9:00 AM Unavailable · Conference').waitFor();
    expect(await day.getByText(/Unavailable · Conference$/).count()).toBe(6);
    expect(await day.getByRole('button', { name: /Free slot, / }).count()).toBe(0);
    expect(await calendar.getByRole('button', { name: /Free slot, / }).count()).toBe(36);
    await page.screenshot({ path: `${screenshotDir}/scheduling-time-off.png`, fullPage: true });

    // On the server: the same slots, now busy-unavailable with the reason; none added twice.
    const after = (await api.searchResources(
      'Slot',
      { schedule: `Schedule/${scheduleId}`, _count: '1000' },
      { cache: 'no-cache' },
    )) as Slot[];
    const onWednesday = after.filter((s) => s.start.startsWith(wednesday));
    expect(onWednesday.map((s) => [s.status, s.comment])).toEqual(
      Array.from({ length: 6 }, () => ['busy-unavailable', 'Conference']),
    );
    const ids = new Set(before.map((s) => s.id));
    expect(onWednesday.every((s) => ids.has(s.id))).toBe(true);
    expect(new Set(after.map((s) => s.start)).size).toBe(after.length);
  }, 300_000);

  it('a patient books their own appointment and cancels it', async () => {
    patientContext = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      locale: 'en-US',
      timezoneId: 'UTC',
    });
    patientPage = await patientContext.newPage();
    patientPage.setDefaultTimeout(30_000);
    await signIn(patientPage, PATIENT_EMAIL, PATIENT_PASSWORD);
    await patientPage.getByRole('link', { name: 'Book an appointment' }).first().click();
    await patientPage.getByRole('heading', { name: 'Book an appointment' }).waitFor();
    const mine = patientPage.getByRole('region', { name: 'Your upcoming appointments' });
    await mine.getByText('None booked.').waitFor();
    const first = patientPage.getByRole('button', { name: /^Book .* with Grace Hopper$/ }).first();
    const label = (await first.getAttribute('aria-label')) as string;
    const when = label.replace(/^Book /, '').replace(/ with Grace Hopper$/, '');
    await first.click();
    const confirm = patientPage.getByRole('form', { name: 'Confirm the booking' });
    await confirm.getByRole('textbox', { name: 'Reason for visit' }).fill('Sore throat');
    await confirm.getByRole('button', { name: 'Book' }).click();
    await patientPage.getByRole('status').getByText(`Booked ${when}`).waitFor();
    const item = mine.getByRole('listitem', { name: when });
    await item.getByText(/Grace Hopper · Sore throat/).waitFor();
    await patientPage.screenshot({ path: `${screenshotDir}/scheduling-patient-booked.png`, fullPage: true });
    const [appointment] = (await api.searchResources(
      'Appointment',
      { patient: `Patient/${beaId}`, status: 'booked' },
      { cache: 'no-cache' },
    )) as Appointment[];
    expect(appointment.participant[0].actor?.reference).toBe(`Patient/${beaId}`);
    const slotId = appointment.slot?.[0]?.reference?.split('/')[1] as string;
    expect(await slotStatus(slotId)).toBe('busy');
    // The slot is gone from the free times.
    expect(await patientPage.getByRole('button', { name: `Book ${when} with Grace Hopper` }).count()).toBe(0);

    await item.getByRole('button', { name: 'Cancel' }).click();
    await item.getByRole('button', { name: 'Yes, cancel' }).click();
    await patientPage.getByRole('status').getByText('Appointment cancelled').waitFor();
    await mine.getByText('None booked.').waitFor();
    await patientPage.getByRole('button', { name: `Book ${when} with Grace Hopper` }).waitFor();
    expect(await slotStatus(slotId)).toBe('free');
  }, 300_000);

  it('fits a phone, a tablet and a desktop', async () => {
    const problems: string[] = [];
    for (const width of [390, 820, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(url(`/schedule?schedule=${scheduleId}`));
      await page.getByRole('button', { name: 'Next week' }).click();
      await page
        .getByRole('button', { name: /Free slot, / })
        .first()
        .waitFor();
      // The availability form too, with its time off.
      await page.getByRole('button', { name: 'Edit availability' }).click();
      await page.getByRole('group', { name: 'Time off 1' }).waitFor();
      await page.waitForLoadState('networkidle');
      await patientPage.setViewportSize({ width, height: 900 });
      await patientPage.goto(url('/book'));
      await patientPage
        .getByRole('button', { name: /^Book .* with Grace Hopper$/ })
        .first()
        .waitFor();
      await patientPage.waitForLoadState('networkidle');
      for (const [name, p] of [
        ['staff calendar', page],
        ['patient booking', patientPage],
      ] as const) {
        const overflow = await overflowsHorizontally(p);
        if (overflow) problems.push(`${name} at ${width} scrolls sideways: ${JSON.stringify(overflow)}`);
        const violations = await seriousViolations(p);
        if (violations.length) problems.push(`${name} at ${width}:\n${describeViolations(violations)}`);
        await p.screenshot({
          path: `${screenshotDir}/scheduling-${name.replace(' ', '-')}-${width}.png`,
          fullPage: true,
        });
      }
    }
    expect(problems).toEqual([]);
  }, 300_000);
});
