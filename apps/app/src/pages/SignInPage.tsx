import { Anchor, Checkbox, Group, PasswordInput, Radio, Stack, Text, TextInput } from '@mantine/core';
import {
  computeCodeChallenge,
  generateCodeVerifier,
  type LoginAuthenticationResponse,
  type ProjectMembership,
} from '@hearth/core';
import { useAction, useHearthContext } from '@hearth/react';
import { useState, type ReactNode } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { AuthLayout, AuthLink } from '../components/AuthLayout.js';
import { FormSubmit } from '../components/FormSubmit.js';

type Step =
  | { kind: 'credentials' }
  | { kind: 'mfa'; login: string; enroll: boolean; qr?: string }
  | { kind: 'project'; login: string; memberships: ProjectMembership[] };

/** Sign in: email and password, then a second factor or the project to work in when asked. */
export function SignInPage(): ReactNode {
  const { client, refreshSession } = useHearthContext();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const [step, setStep] = useState<Step>({ kind: 'credentials' });
  const [verifier, setVerifier] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [remember, setRemember] = useState(false);
  const [mfaCode, setMfaCode] = useState('');
  const [membership, setMembership] = useState<string | null>(null);
  const { busy, error, submit } = useAction();

  async function next(response: LoginAuthenticationResponse, codeVerifier: string): Promise<void> {
    if (response.code) {
      await client.processCode(response.code, { codeVerifier });
      await refreshSession();
      const target = params.get('next');
      navigate(target && target.startsWith('/') && !target.startsWith('//') ? target : '/');
    } else if (response.mfaRequired || response.mfaEnrollRequired) {
      setStep({ kind: 'mfa', login: response.login, enroll: !!response.mfaEnrollRequired, qr: response.enrollQrCode });
    } else if (response.memberships) {
      setMembership(response.memberships[0]?.id ?? null);
      setStep({ kind: 'project', login: response.login, memberships: response.memberships });
    } else {
      throw new Error('The server did not finish the sign-in');
    }
  }

  if (step.kind === 'mfa') {
    return (
      <AuthLayout title="Second factor">
        <form
          onSubmit={submit(async () => next(await client.verifyMfa(step.login, mfaCode.trim(), step.enroll), verifier))}
        >
          <Stack>
            {step.enroll && step.qr && (
              <>
                <Text size="sm">Scan this code with your authenticator app, then enter the code it shows.</Text>
                <img
                  src={step.qr}
                  alt="Authenticator enrolment QR code"
                  style={{ alignSelf: 'center', maxWidth: 200 }}
                />
              </>
            )}
            <TextInput
              label="Authentication code"
              autoComplete="one-time-code"
              inputMode="numeric"
              required
              autoFocus
              value={mfaCode}
              onChange={(e) => setMfaCode(e.currentTarget.value)}
            />
            <FormSubmit busy={busy} error={error}>
              Verify
            </FormSubmit>
          </Stack>
        </form>
      </AuthLayout>
    );
  }

  if (step.kind === 'project') {
    return (
      <AuthLayout title="Choose a project">
        <form
          onSubmit={submit(async () => next(await client.chooseProfile(step.login, membership as string), verifier))}
        >
          <Stack>
            <Radio.Group value={membership} onChange={setMembership} label="Projects you belong to" required>
              <Stack gap="xs" mt="xs">
                {step.memberships.map((m) => (
                  <Radio
                    key={m.id}
                    value={m.id as string}
                    label={`${m.project?.display ?? m.project?.reference ?? m.id}${m.profile?.display ? ` — ${m.profile.display}` : ''}`}
                  />
                ))}
              </Stack>
            </Radio.Group>
            <FormSubmit busy={busy} error={error} disabled={!membership}>
              Continue
            </FormSubmit>
          </Stack>
        </form>
      </AuthLayout>
    );
  }

  return (
    <AuthLayout title="Sign in">
      <form
        onSubmit={submit(async () => {
          const codeVerifier = generateCodeVerifier();
          setVerifier(codeVerifier);
          const response = await client.startLogin({
            email: email.trim(),
            password,
            remember,
            projectId: params.get('project') ?? undefined,
            codeChallenge: await computeCodeChallenge(codeVerifier),
            codeChallengeMethod: 'S256',
          });
          await next(response, codeVerifier);
        })}
      >
        <Stack>
          <TextInput
            label="Email"
            type="email"
            autoComplete="username"
            required
            autoFocus
            value={email}
            onChange={(e) => setEmail(e.currentTarget.value)}
          />
          <PasswordInput
            label="Password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.currentTarget.value)}
          />
          <Group justify="space-between">
            <Checkbox label="Remember me" checked={remember} onChange={(e) => setRemember(e.currentTarget.checked)} />
            <Anchor component={Link} to="/resetpassword" size="sm">
              Forgot password?
            </Anchor>
          </Group>
          <FormSubmit busy={busy} error={error}>
            Sign in
          </FormSubmit>
          <AuthLink prompt="New here?" to="/register">
            Register a project
          </AuthLink>
        </Stack>
      </form>
    </AuthLayout>
  );
}
